/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// ibv_counters bound to flows (ibv_create_counters, ibv_attach_counters_point_flow,
// ibv_read_counters), as mlx5 implements them: counter points are defined on the
// object first, then it is bound statically when a flow is created with an
// IBV_FLOW_SPEC_ACTION_COUNT spec naming it; from then on every frame the flow steers is
// counted, at steering time, whether or not a receive was posted for it.
#ifndef SPEAD_EMU_FLOW_COUNTERS_H
#define SPEAD_EMU_FLOW_COUNTERS_H

#include "object_shell.h"

#include <infiniband/verbs.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace spead_emu {

class device_context;

class flow_counters
{
public:
    explicit flow_counters(device_context& context);
    static flow_counters* from(ibv_counters* counters);
    ibv_counters* verbs() { return &m_shell.verbs; }
    device_context& context() { return m_context; }

    // The verbs, with their return conventions (0 or an errno value).
    int attach_point(const ibv_counter_attach_attr& attr, ibv_flow* flow);
    int read(uint64_t* values, uint32_t count, uint32_t flags);

    // A flow is created with these counters (the context's control mutex held):
    // 0, or EINVAL with the reason (no point defined, already bound to a flow).
    int bind(std::string& reason);
    void unbind();
    bool bound() const { return m_bound; }

    // A frame the bound flow steered (NIC thread).
    void count_frame(size_t length)
    {
        m_packets.fetch_add(1, std::memory_order_relaxed);
        m_bytes.fetch_add(length, std::memory_order_relaxed);
    }

private:
    struct point {
        ibv_counter_description description;
        uint32_t index;
    };
    void fill(uint64_t* values, uint32_t count, uint64_t packets, uint64_t bytes) const;

    object_shell<ibv_counters, flow_counters> m_shell{ this };
    device_context& m_context;
    std::mutex m_mutex; // points, binding, cache
    std::vector<point> m_points;
    uint32_t m_slots = 0; // highest index + 1
    bool m_bound = false;
    bool m_ever_bound = false;
    std::atomic<uint64_t> m_packets{ 0 };
    std::atomic<uint64_t> m_bytes{ 0 };
    // IBV_READ_COUNTERS_ATTR_PREFER_CACHED reads what the driver last fetched, which
    // mlx5 refreshes about once a second.
    uint64_t m_cached_packets = 0;
    uint64_t m_cached_bytes = 0;
    std::chrono::steady_clock::time_point m_cached_at{};
};

namespace operations {
ibv_counters* create_counters(ibv_context* context, ibv_counters_init_attr* attr);
int destroy_counters(ibv_counters* counters);
int attach_counters_point_flow(ibv_counters* counters,
                               ibv_counter_attach_attr* attr,
                               ibv_flow* flow);
int read_counters(ibv_counters* counters,
                  uint64_t* values,
                  uint32_t count,
                  uint32_t flags);
// A device without flow counters (SPEAD_EMU_FLOW_COUNTERS=0): rdma-core's answer for
// providers that lack them.
ibv_counters* create_counters_unsupported(ibv_context* context,
                                          ibv_counters_init_attr* attr);
} // namespace operations

} // namespace spead_emu

#endif
