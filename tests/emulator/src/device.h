/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// One emulated raw-packet device per netdev named in SPEAD_EMU_NETDEVS.
#ifndef SPEAD_EMU_DEVICE_H
#define SPEAD_EMU_DEVICE_H

#include "counters.h"
#include "netdev.h"
#include "object_shell.h"

#include <infiniband/verbs.h>

#include <atomic>
#include <string>
#include <vector>

namespace spead_emu {

// Limits the device advertises, in the range of a ConnectX-5; create calls enforce them.
struct device_limits {
    static constexpr int max_qp = 1 << 18;
    static constexpr int max_qp_wr = 32768;
    static constexpr int max_sge = 30;
    static constexpr int max_cq = 1 << 24;
    static constexpr int max_cqe = (1 << 22) - 1;
    static constexpr int max_mr = 1 << 24;
    static constexpr int max_pd = 1 << 24;
    static constexpr int max_inline_data = 512;
    static constexpr int max_comp_vectors = 64;
};

class emulated_device
{
public:
    emulated_device(const netdev_facts& netdev, int index);

    static emulated_device* from(ibv_device* device);
    ibv_device* verbs() { return &m_shell.verbs; }
    const std::string& netdev() const { return m_netdev; }
    int index() const { return m_index; }
    // EUI-64 from the netdev's MAC as a RoCE NIC derives it, in network byte order.
    __be64 node_guid() const { return m_node_guid; }
    frame_counters& port_counters() { return m_port_counters; }
    uint32_t allocate_qp_number() { return m_next_qp_number++; }

private:
    object_shell<ibv_device, emulated_device> m_shell;
    std::string m_netdev;
    int m_index;
    __be64 m_node_guid;
    frame_counters m_port_counters;
    std::atomic<uint32_t> m_next_qp_number{ 0x100 };
};

// The devices for SPEAD_EMU_NETDEVS as it is now. Devices live for the whole process,
// as rdma-core's do, so pointers handed out stay valid.
std::vector<emulated_device*> discover_devices();

} // namespace spead_emu

#endif
