/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// A multi-packet receive queue (mlx5 striding RQ) for udp_ibv_reader: one registered
// buffer cut into WQEs of 2^n strides; the NIC writes each frame into as many strides
// as it needs, so a 1472-byte datagram takes 1536 bytes of the ring, not a whole
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

#include "mlx5_direct.h"
#include "verbs.h"
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace ibv {

class SPEAD_API striding_receive_queue
{
public:
    /*! Sizes the queue for about \p buffer_bytes (at least two WQEs, within the
     * device's limits; \p clamped says what limited it, empty if nothing did) and
     * creates it. \p max_frame: the largest frame the reader accepts; a WQE holds
     * more. \throws std::system_error naming the call that failed */
    striding_receive_queue(const device_binding& device,
                           const striding_rq_support& support,
                           ibv_pd* pd,
                           ibv_comp_channel* channel,
                           int comp_vector,
                           std::size_t buffer_bytes,
                           std::size_t max_frame,
                           std::string& clamped);

    /*! The QP flows steer to. */
    ibv_qp* qp() const { return d_qp.get(); }
    /*! The CQ, for ibv_req_notify_cq and ibv_ack_cq_events. */
    ibv_cq* cq() const { return ibv_cq_ex_to_cq(d_cq.get()); }

    std::size_t buffer_size() const { return d_buffer_bytes; }
    std::size_t wqe_count() const { return d_wqe_count; }
    std::size_t strides_per_wqe() const { return d_strides_per_wqe; }
    std::size_t stride_size() const { return d_stride; }

    /*! Posts every WQE and makes the WQ ready (also after reset()). */
    void start();
    /*! After an error completion the WQ is in ERR: back to RESET, then start(). */
    void reset();

    /*! One completion. A filler consumed the rest of a WQE without a frame. */
    struct completion {
        ibv_wc_status status;
        bool filler;
        const std::uint8_t* frame; //!< in the ring (valid until repost_finished())
        std::uint32_t length;      //!< bytes of the frame
    };

    /*! Takes up to \p max completions into \p out (ibv_start_poll ... ibv_end_poll).
     * \return how many; 0 when the CQ is empty
     * \throws std::system_error if polling fails */
    int poll(completion* out, int max);
    /*! Gives the WQEs whose strides were all used up back to the NIC (after their
     * frames have been handed on). */
    void repost_finished();

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
