/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// A multi-packet receive queue (mlx5 striding RQ), the peer of slot_receive_queue: one
// registered buffer cut into WQEs of 2^n strides; the NIC writes each frame into as many
// strides as it needs, so a 1472-byte datagram takes 1536 bytes of the ring, not a whole
// max_size slot. The objects, in creation order: an extended CQ, the striding WQ, an
// indirection table of that one WQ, and a raw-packet QP hashing into it (receive only,
// flows attach to it), then the buffer and its MR.
//
// The WQEs are written straight into the ring that mlx5dv_init_obj describes, and the
// doorbell record updated, as rdma-core's mlx5 provider would: its ibv_post_wq_recv
// advances its tail once per completion, which on a striding RQ (many completions per
// WQE) soon makes it refuse with ENOMEM. Offsets come from adding up the strides each
// completion reports (the byte_len field packs byte count, strides and a filler flag).

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_STRIDING_RECEIVE_QUEUE_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_STRIDING_RECEIVE_QUEUE_H

#include "device_binding.h"
#include "mlx5_direct.h"
#include "receive_queue.h"
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace ibv {

class SPEAD_API striding_receive_queue final : public receive_queue
{
public:
    /*! Sizes the queue for about \p params.buffer_size bytes (at least two WQEs,
     * within the device's limits; \p clamped says what limited it, empty if nothing
     * did) and creates it. A WQE holds at least \p params.max_frame bytes.
     * \throws std::system_error naming the call that failed */
    striding_receive_queue(const device_binding& device,
                           const striding_rq_support& support,
                           const receive_queue_params& params,
                           std::string& clamped);

    ibv_qp* qp() const override { return d_qp.get(); }
    ibv_cq* cq() const override { return ibv_cq_ex_to_cq(d_cq.get()); }
    std::size_t buffer_size() const override { return d_buffer_bytes; }
    bool multi_packet() const override { return true; }
    std::string describe() const override;
    const char* name() const override { return "multi-packet receive queue"; }

    std::size_t wqe_count() const { return d_wqe_count; }
    std::size_t strides_per_wqe() const { return d_strides_per_wqe; }
    std::size_t stride_size() const { return d_stride; }

    /*! Posts every WQE and makes the WQ ready (also after reset()). */
    void start() override;
    /*! The WQ back to RESET, then start(). */
    void reset() override;
    /*! ibv_start_poll ... ibv_end_poll; frames are parsed in place in the strides. */
    int poll(ibv_wc* out, int max, int& frames) override;
    /*! Gives the WQEs whose strides were all used up back to the NIC. */
    void repost() override;

private:
    void post(std::size_t wqe);
    void modify_wq(ibv_wq_state state);

    // In creation order; destroyed in reverse (MR, buffer, QP, table, WQ, CQ).
    cq_ex_ptr d_cq;
    wq_ptr d_wq;
    rwq_ind_table_ptr d_table;
    qp_ptr d_qp;
    mapping_ptr d_buffer;
    mr_ptr d_mr;

    std::size_t d_stride = 0;
    std::size_t d_strides_per_wqe = 0;
    std::size_t d_wqe_bytes = 0;
    std::size_t d_wqe_count = 0;
    std::size_t d_buffer_bytes = 0;

    mlx5dv_rwq d_ring{};                 //!< the WQ's WQE ring and doorbell record
    std::uint32_t d_posted = 0;          //!< WQEs posted since start() (16 bits count)
    std::size_t d_tail = 0;              //!< WQE being filled (index into the buffer)
    std::size_t d_tail_strides = 0;      //!< strides of it used so far
    std::vector<std::size_t> d_finished; //!< WQEs used up, to repost
};

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
