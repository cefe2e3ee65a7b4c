/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What posting a work request does the same for every kind of QP: copying inline data
// and queueing a chain of receive WRs.
#ifndef SPEAD_EMU_WORK_POSTING_H
#define SPEAD_EMU_WORK_POSTING_H

#include "work_ring.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <vector>

namespace spead_emu {

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
