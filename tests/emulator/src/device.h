/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// One emulated raw-packet device per netdev named in SPEAD_EMU_NETDEVS.
#ifndef SPEAD_EMU_DEVICE_H
#define SPEAD_EMU_DEVICE_H

#include "counters.h"
#include "fault_injection.h"
#include "netdev.h"
#include "object_shell.h"
#include "port_hw_counters.h"

#include <infiniband/verbs.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace spead_emu {

class device_context;

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
    static constexpr int max_rd_atomic = 16;
    // The port's max_msg_sz: the largest RC message (an RC QP refuses larger ones).
    static constexpr uint32_t max_message_size = 1u << 30;
    static constexpr int max_comp_vectors = 64;
};

// Optional hardware, the same for every device, read from the environment once:
//   SPEAD_EMU_FLOW_COUNTERS=0  no flow counters: ibv_create_counters fails with
//                              EOPNOTSUPP (as on mlx4, or mlx5 before kernel 4.18)
//   SPEAD_EMU_HW_COUNTERS=0    no port counters behind ibdev_path (as on kernels
//                              without hw_counters)
//   SPEAD_EMU_COMP_VECTORS=N   N completion vectors (1..64) instead of one per CPU
//   SPEAD_EMU_MODEL=cx5        a ConnectX-5-like mlx5 device: mlx5dv (the stand-in
//                              libmlx5.so.1) with striding RQs, extended CQs, WQs,
//                              indirection tables and RX-hash QPs (mlx5_model.h);
//                              unset or "plain": the plain raw-packet device
enum class device_model { plain, cx5 };

struct device_features {
    bool flow_counters = true;
    bool hw_counters = true;
    bool ip_checksum_offload = true; // IBV_RAW_PACKET_CAP_IP_CSUM and IBV_SEND_IP_CSUM
    int comp_vectors = 0;            // 0: one per online CPU
    device_model model = device_model::plain;
};
const device_features& features();

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
    // Brings the port's hw_counters files up to date with port_counters() (NIC
    // threads call it after each burst of received frames).
    void publish_port_counters();
    uint32_t allocate_qp_number() { return m_next_qp_number++; }
    device_faults& faults() { return m_faults; }
    // The open contexts, which injected faults reach (fault_injection.cc).
    void add_context(device_context* context);
    void remove_context(device_context* context);
    template <typename Visit>
    void for_each_context(Visit visit)
    {
        std::lock_guard<std::mutex> lock(m_contexts_mutex);
        for (device_context* context : m_contexts)
            visit(*context);
    }

private:
    object_shell<ibv_device, emulated_device> m_shell{ this };
    std::string m_netdev;
    int m_index;
    __be64 m_node_guid;
    frame_counters m_port_counters;
    std::unique_ptr<port_hw_counters> m_hw_counters; // null without SPEAD_EMU_HW_COUNTERS
    std::atomic<uint32_t> m_next_qp_number{ 0x100 };
    device_faults m_faults;
    std::mutex m_contexts_mutex;
    std::vector<device_context*> m_contexts;
};

// The devices for SPEAD_EMU_NETDEVS as it is now. Devices live for the whole process,
// as rdma-core's do, so pointers handed out stay valid.
std::vector<emulated_device*> discover_devices();

} // namespace spead_emu

#endif
