/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The receive queue of every raw-packet device: a receive CQ, a RAW_PACKET QP (with
// the one-entry send queue it must have) and one registered ring cut into slots of
// max_size + 42 bytes, one receive WR per slot, whose wr_id is the slot's address. The
// WRs are built once, linked in a circle. A receive queue completes its WRs in the
// order they were posted (also when flushed), so the slots a poll took are the next
// ones of the circle: reposting them is one ibv_post_recv of that stretch of the
// chain, whatever the number of slots. A frame longer than a slot completes with
// IBV_WC_LOC_LEN_ERR.

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_SLOT_RECEIVE_QUEUE_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_SLOT_RECEIVE_QUEUE_H

#include "device_binding.h"
#include "receive_queue.h"
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace ibv {

class SPEAD_API slot_receive_queue final : public receive_queue
{
public:
    /*! Whole slots of \p params.max_frame bytes in about \p params.buffer_size bytes,
     * fewer when the device's limits say so (\p clamped then names the limit, else it
     * is empty). Leaves the QP in INIT, nothing posted yet.
     * \throws std::system_error naming the call that failed */
    slot_receive_queue(const device_binding& device,
                       const receive_queue_params& params,
                       std::string& clamped);

    ibv_qp* qp() const override { return d_qp.get(); }
    ibv_cq* cq() const override { return d_recv_cq.get(); }
    std::size_t buffer_size() const override { return d_slots * d_slot_size; }
    bool multi_packet() const override { return false; }
    std::string describe() const override;
    const char* name() const override { return "receive queue pair"; }

    /*! The slots the device limits left room for. */
    std::size_t slots() const { return d_slots; }

    void start() override;
    void reset() override;
    int poll(ibv_wc* out, int max, int& frames) override;
    void repost() override;

private:
    /*! \p i (below twice the slots) as a slot index, without a division. */
    std::size_t wrap(std::size_t i) const { return i < d_slots ? i : i - d_slots; }
    /*! Posts \p count slots from \p first on (wrapping round). */
    void post(std::size_t first, std::size_t count);

    const std::uint8_t d_port_num;
    const std::size_t d_slot_size;
    std::size_t d_slots = 0;

    // In creation order; destroyed in reverse (MR, ring, QP, CQs).
    cq_ptr d_recv_cq;
    cq_ptr d_send_cq;
    qp_ptr d_qp;
    mapping_ptr d_ring;
    mr_ptr d_mr;

    // One WR per slot, built once, each linked to the next (the last to the first).
    std::vector<ibv_sge> d_sges;
    std::vector<ibv_recv_wr> d_wrs;
    std::size_t d_head = 0;  //!< the oldest slot still posted
    std::size_t d_taken = 0; //!< slots the polls took since the last repost
};

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
