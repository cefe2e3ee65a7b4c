/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef SPEAD_EMU_COUNTERS_H
#define SPEAD_EMU_COUNTERS_H

#include <spead_emu/extensions.h>

#include <atomic>
#include <cstdint>

namespace spead_emu {

// Live counters, bumped by NIC threads and read by tests at any time.
struct frame_counters {
    std::atomic<uint64_t> rx_frames_delivered{ 0 };
    std::atomic<uint64_t> rx_frames_dropped_no_receive{ 0 };
    std::atomic<uint64_t> rx_frames_dropped_qp_not_ready{ 0 };
    std::atomic<uint64_t> rx_frames_dropped_oversize{ 0 };
    std::atomic<uint64_t> rx_frames_dropped_socket_overflow{ 0 };
    std::atomic<uint64_t> tx_frames_sent{ 0 };
    std::atomic<uint64_t> tx_frames_lost{ 0 };
    std::atomic<uint64_t> error_completions{ 0 };
    std::atomic<uint64_t> rx_frames_dropped_port_down{ 0 };
    std::atomic<uint64_t> rx_frames_dropped_injected{ 0 };
    std::atomic<uint64_t> rx_frames_duplicated_injected{ 0 };
    std::atomic<uint64_t> rx_frames_reordered_injected{ 0 };

    spead_emu_counters snapshot() const
    {
        spead_emu_counters copy{};
        copy.rx_frames_delivered = rx_frames_delivered.load();
        copy.rx_frames_dropped_no_receive = rx_frames_dropped_no_receive.load();
        copy.rx_frames_dropped_qp_not_ready = rx_frames_dropped_qp_not_ready.load();
        copy.rx_frames_dropped_oversize = rx_frames_dropped_oversize.load();
        copy.rx_frames_dropped_socket_overflow = rx_frames_dropped_socket_overflow.load();
        copy.tx_frames_sent = tx_frames_sent.load();
        copy.tx_frames_lost = tx_frames_lost.load();
        copy.error_completions = error_completions.load();
        copy.rx_frames_dropped_port_down = rx_frames_dropped_port_down.load();
        copy.rx_frames_dropped_injected = rx_frames_dropped_injected.load();
        copy.rx_frames_duplicated_injected = rx_frames_duplicated_injected.load();
        copy.rx_frames_reordered_injected = rx_frames_reordered_injected.load();
        return copy;
    }
};

// Counts an event on a QP and on its device's port at once.
inline void count(std::atomic<uint64_t> frame_counters::*which,
                  frame_counters& queue_pair,
                  frame_counters& port,
                  uint64_t amount = 1)
{
    (queue_pair.*which) += amount;
    (port.*which) += amount;
}

} // namespace spead_emu

#endif
