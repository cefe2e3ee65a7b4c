/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What posting a work request does the same for every kind of QP: the frame of
// ibv_post_send/ibv_post_recv, copying inline data and queueing a chain of receives.
#ifndef SPEAD_EMU_WORK_POSTING_H
#define SPEAD_EMU_WORK_POSTING_H

#include "work_ring.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <mutex>
#include <vector>

namespace spead_emu {

// ibv_post_send / ibv_post_recv on a QP: EIO after a fatal device error; else
// \p queue(wr, wake) queues the chain under \p mutex (0, or the errno with wr left at
// the refused WR, which *bad_wr then names) and sets wake when the NIC must look,
// and \p ring_doorbell wakes it.
template <typename Wr, typename Queue, typename Ring>
int post_chain(bool device_fatal,
               std::mutex& mutex,
               Wr* wr,
               Wr** bad_wr,
               Queue queue,
               Ring ring_doorbell)
{
    int error = EIO; // a device after a fatal error refuses every command
    bool wake = false;
    if (!device_fatal) {
        std::lock_guard<std::mutex> lock(mutex);
        error = queue(wr, wake);
    }
    if (error != 0 && bad_wr != nullptr)
        *bad_wr = wr;
    if (wake)
        ring_doorbell();
    return error;
}

// IBV_SEND_INLINE: the bytes of \p wr's SGEs copied into \p out now (the application
// may reuse them when ibv_post_send returns); 0, or EINVAL when they exceed \p max.
inline int
copy_inline_data(const ibv_send_wr& wr, uint32_t max, std::vector<uint8_t>& out)
{
    size_t total = 0;
    for (int i = 0; i < wr.num_sge; i++)
        total += wr.sg_list[i].length;
    if (total > max)
        return EINVAL;
    out.clear();
    for (int i = 0; i < wr.num_sge; i++) {
        const auto* bytes =
            reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(wr.sg_list[i].addr));
        out.insert(out.end(), bytes, bytes + wr.sg_list[i].length);
    }
    return 0;
}

// The fields every send slot has, from \p wr: wr_id, whether it is signalled (always
// with sq_sig_all), and its data: inline bytes copied now, or its SGEs. 0, or EINVAL
// for inline data beyond \p max_inline.
template <typename Slot>
int fill_send_slot(Slot& slot,
                   const ibv_send_wr& wr,
                   uint32_t max_inline,
                   bool signal_all)
{
    slot.wr_id = wr.wr_id;
    slot.signalled = signal_all || (wr.send_flags & IBV_SEND_SIGNALED);
    slot.is_inline = (wr.send_flags & IBV_SEND_INLINE) != 0;
    slot.sges.clear();
    if (slot.is_inline)
        return copy_inline_data(wr, max_inline, slot.inline_data);
    slot.inline_data.clear();
    slot.sges.assign(wr.sg_list, wr.sg_list + wr.num_sge);
    return 0;
}

// Queues the receive WRs of the chain \p wr into \p ring (its slots have wr_id and
// sges) for a QP in \p state: 0, or the errno with \p wr left at the refused WR.
// Receives may be posted from INIT on (IB spec); in ERR they are accepted, and
// \p flush says the NIC must flush them.
template <typename Slot>
int post_receive_chain(work_ring<Slot>& ring,
                       ibv_recv_wr*& wr,
                       uint32_t max_sge,
                       ibv_qp_state state,
                       bool& flush)
{
    for (; wr != nullptr; wr = wr->next) {
        if (state == IBV_QPS_RESET)
            return EINVAL;
        Slot* slot = nullptr;
        if (const int error = ring.claim(wr->num_sge, max_sge, EINVAL, slot))
            return error;
        slot->wr_id = wr->wr_id;
        slot->sges.assign(wr->sg_list, wr->sg_list + wr->num_sge);
        ring.posted++;
        flush = state == IBV_QPS_ERR;
    }
    return 0;
}

} // namespace spead_emu

#endif
