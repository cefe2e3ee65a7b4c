/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The faults a test has injected into one emulated device (spead_emu_inject_fault,
// spead_emu_set_frame_faults in fault_injection.cc): the port's link, a fatal error,
// removal, and what the network does to received frames.
#ifndef SPEAD_EMU_FAULT_INJECTION_H
#define SPEAD_EMU_FAULT_INJECTION_H

#include <atomic>
#include <cstdint>

namespace spead_emu {

// What becomes of one received frame a flow matched.
enum class frame_fate { deliver, drop, duplicate, hold };

class device_faults
{
public:
    bool port_down() const { return m_port_down.load(std::memory_order_relaxed); }
    // After DEVICE_FATAL (or removal) verbs that create, modify or post fail with EIO.
    bool fatal() const { return m_fatal.load(std::memory_order_relaxed); }
    bool removed() const { return m_removed.load(std::memory_order_relaxed); }
    void set_port_down(bool down) { m_port_down = down; }
    void set_fatal() { m_fatal = true; }
    void set_removed() { m_removed = true; }

    // Probabilities from 0 to 1.
    void set_frame_rates(double drop, double duplicate, double reorder);
    // Draws the fate of the next frame from \p random (a QP's own generator state).
    frame_fate next_frame_fate(uint64_t& random) const;

private:
    std::atomic<bool> m_port_down{ false };
    std::atomic<bool> m_fatal{ false };
    std::atomic<bool> m_removed{ false };
    // Thresholds out of 2^32; all zero when no frame fault is set.
    std::atomic<uint32_t> m_drop{ 0 };
    std::atomic<uint32_t> m_duplicate{ 0 };
    std::atomic<uint32_t> m_reorder{ 0 };
};

} // namespace spead_emu

#endif
