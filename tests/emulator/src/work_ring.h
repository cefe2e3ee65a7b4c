/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The ring of one queue's work requests: posted by the application, taken by the NIC
// thread, released when a completion at or after the slot is polled.
#ifndef SPEAD_EMU_WORK_RING_H
#define SPEAD_EMU_WORK_RING_H

#include <infiniband/verbs.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace spead_emu {

template <typename Slot>
struct work_ring {
    explicit work_ring(size_t size) : slots(size) {}

    // The slot of the work request at \p index (counted since creation).
    Slot& at(uint64_t index) { return slots[index % slots.size()]; }

    // The slot the next work request, of \p num_sge entries, is posted to: 0, or
    // \p sge_error when it has more entries than \p max_sge, or ENOMEM while every slot
    // is still in use (so a send queue with nothing signalled fills up).
    int claim(int num_sge, uint32_t max_sge, int sge_error, Slot*& slot)
    {
        if (num_sge < 0 || static_cast<uint32_t>(num_sge) > max_sge)
            return sge_error;
        if (posted - released.load() >= slots.size())
            return ENOMEM;
        slot = &at(posted);
        return 0;
    }

    // A completion of the work request at \p index was polled: its slot and those
    // before it are free (completions may be polled out of order across CQs).
    void release_through(uint64_t index)
    {
        uint64_t current = released.load();
        while (index + 1 > current &&
               !released.compare_exchange_weak(current, index + 1)) {
        }
    }

    // A reset: what is outstanding is forgotten, without completions.
    void forget_outstanding()
    {
        taken = posted;
        released = posted;
    }

    std::vector<Slot> slots;
    uint64_t posted = 0; // by the application, under the queue pair's mutex
    uint64_t taken = 0;  // by the NIC thread
    std::atomic<uint64_t> released{ 0 };
};

// One posted receive WR.
struct receive_slot {
    uint64_t wr_id = 0;
    std::vector<ibv_sge> sges;
};

} // namespace spead_emu

#endif
