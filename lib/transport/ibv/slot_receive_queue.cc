/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "slot_receive_queue.h"
#include <system_error>
#include <algorithm>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace ibv {

slot_receive_queue::slot_receive_queue(const device_binding& device,
                                       const receive_queue_params& params,
                                       std::string& clamped)
    : d_port_num(device.port_num()), d_slot_size(params.max_frame)
{
    // One receive WR and one CQ entry per slot, one MR for the ring.
    d_slots = params.buffer_size / d_slot_size;
    const ibv_device_attr attr = device.query_device();
    clamped.clear();
    const auto clamp = [&](std::size_t device_limit, const char* name) {
        if (device_limit < d_slots) {
            d_slots = device_limit;
            clamped = name;
        }
    };
    clamp(std::size_t(std::max(attr.max_qp_wr, 1)), "max_qp_wr, receive work requests");
    clamp(std::size_t(std::max(attr.max_cqe, 1)), "max_cqe, completion queue entries");
    clamp(std::size_t(std::max<std::uint64_t>(attr.max_mr_size / d_slot_size, 1)),
          "max_mr_size, bytes in one memory region");

    ibv_context* context = device.context();
    d_recv_cq = create_cq(context,
                          int(d_slots),
                          params.channel,
                          params.comp_vector < 0 ? 0 : params.comp_vector);
    // A RAW_PACKET QP needs a send queue; this one never sends.
    d_send_cq = create_cq(context, 1, nullptr, 0);
    ibv_qp_cap cap{};
    cap.max_send_wr = 1;
    cap.max_send_sge = 1;
    cap.max_recv_wr = std::uint32_t(d_slots);
    cap.max_recv_sge = 1;
    d_qp = create_raw_packet_qp(params.pd, d_send_cq.get(), d_recv_cq.get(), cap);
    modify_qp(d_qp.get(), IBV_QPS_INIT, d_port_num);

    const std::size_t bytes = d_slots * d_slot_size;
    d_ring = allocate_ring(bytes);
    d_mr = register_memory(params.pd, d_ring.get(), bytes, IBV_ACCESS_LOCAL_WRITE);
    d_sges.resize(d_slots);
    d_wrs.resize(d_slots);
    for (std::size_t i = 0; i < d_slots; i++) {
        d_sges[i].addr = reinterpret_cast<std::uintptr_t>(d_ring.get() + i * d_slot_size);
        d_sges[i].length = std::uint32_t(d_slot_size);
        d_sges[i].lkey = d_mr->lkey;
        d_wrs[i].wr_id = d_sges[i].addr;
        d_wrs[i].next = &d_wrs[(i + 1) % d_slots];
        d_wrs[i].sg_list = &d_sges[i];
        d_wrs[i].num_sge = 1;
    }
}

std::string slot_receive_queue::describe() const
{
    return std::to_string(d_slots) + " slots of " + std::to_string(d_slot_size) +
           " bytes";
}

void slot_receive_queue::post(std::size_t first, std::size_t count)
{
    // Cut the circle after the last one for the call; the WRs are copied by it.
    ibv_recv_wr& last = d_wrs[wrap(first + count - 1)];
    ibv_recv_wr* const after = last.next;
    last.next = nullptr;
    ibv_recv_wr* bad = nullptr;
    const int status = ibv_post_recv(d_qp.get(), &d_wrs[first], &bad);
    last.next = after;
    if (status != 0)
        throw std::system_error(status,
                                std::generic_category(),
                                "ibv_post_recv(" + std::to_string(count) +
                                    " slots; the receive ring cannot be refilled: check "
                                    "the device with spead_ibv_check and make the "
                                    "source again)");
}

void slot_receive_queue::start()
{
    d_head = 0;
    d_taken = 0;
    post(0, d_slots);
    modify_qp(d_qp.get(), IBV_QPS_RTR);
}

void slot_receive_queue::reset()
{
    // RESET discards the outstanding WRs and their completions.
    modify_qp(d_qp.get(), IBV_QPS_RESET);
    modify_qp(d_qp.get(), IBV_QPS_INIT, d_port_num);
    start();
}

int slot_receive_queue::poll(ibv_wc* out, int max, int& frames)
{
    const int n = ibv_poll_cq(d_recv_cq.get(), std::min(max, max_poll_batch), out);
    if (n < 0)
        throw std::runtime_error(
            "ibv_poll_cq failed (a completion queue overrun, or the device was "
            "removed); check the device with spead_ibv_check and make the source again");
    if (n > 0) {
        // In order, as the queue completes them: the last is the slot expected.
        const std::size_t last = wrap(d_head + d_taken + std::size_t(n) - 1);
        if (out[n - 1].wr_id != d_wrs[last].wr_id)
            throw std::runtime_error(
                "the receive queue completed its slots out of order, which the verbs "
                "specification rules out; report the device and driver");
        d_taken += std::size_t(n);
    }
    frames = n;
    return n;
}

void slot_receive_queue::repost()
{
    if (d_taken == 0)
        return;
    const std::size_t first = d_head;
    const std::size_t count = d_taken;
    d_head = wrap(d_head + d_taken);
    d_taken = 0;
    post(first, count);
}

} // namespace ibv
} // namespace spead
} // namespace gr
