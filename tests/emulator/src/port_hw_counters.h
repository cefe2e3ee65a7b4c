/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The port counters a device shows in sysfs, where applications find them through
// ibv_device.ibdev_path: <ibdev_path>/ports/1/hw_counters/out_of_buffer (what mlx5
// counts when a frame finds no posted receive). Sysfs itself cannot be written, so the
// emulated device's ibdev_path leads to a private directory,
// ${TMPDIR:-/tmp}/spead-emu-<pid>/<device>, kept up to date and removed at exit
// (directories of processes that died without exiting are swept by the next process).
#ifndef SPEAD_EMU_PORT_HW_COUNTERS_H
#define SPEAD_EMU_PORT_HW_COUNTERS_H

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace spead_emu {

class port_hw_counters
{
public:
    // Creates the directory with every counter at 0; ibdev_path() is empty if that
    // failed (said on stderr): the device then has no counters, as on old kernels.
    explicit port_hw_counters(const std::string& device_name);

    const std::string& ibdev_path() const { return m_ibdev_path; }

    // Rewrites out_of_buffer when the value changed; readers see the old or the new
    // file, never a partial one.
    void publish_out_of_buffer(uint64_t value);

private:
    std::mutex m_mutex;
    std::string m_ibdev_path;
    std::string m_counter_directory;
    std::atomic<uint64_t> m_published_out_of_buffer{ 0 };
};

} // namespace spead_emu

#endif
