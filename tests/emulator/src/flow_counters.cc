/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "flow_counters.h"

#include "device_context.h"
#include "log.h"
#include "verbs_lifecycle.h"

#include <algorithm>
#include <cerrno>

namespace spead_emu {
namespace {

// How often the driver's cache of flow counters is refreshed (mlx5: about 1 s).
constexpr auto cache_period = std::chrono::seconds(1);

} // namespace

flow_counters::flow_counters(device_context& context) : m_context(context)
{
    m_shell.verbs.context = context.verbs();
}

flow_counters* flow_counters::from(ibv_counters* counters)
{
    return object_shell<ibv_counters, flow_counters>::owner_of(counters);
}

int flow_counters::attach_point(const ibv_counter_attach_attr& attr, ibv_flow* flow)
{
    // mlx5 binds counters only statically, when a flow is created with them.
    if (flow != nullptr) {
        trace("ibv_attach_counters_point_flow: only static attach (flow NULL) is "
              "supported, as on mlx5: ENOTSUP");
        return ENOTSUP;
    }
    if (attr.comp_mask != 0)
        return EOPNOTSUPP;
    if (attr.counter_desc != IBV_COUNTER_PACKETS &&
        attr.counter_desc != IBV_COUNTER_BYTES)
        return ENOTSUP;
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_bound)
        return EBUSY; // man page: no attach while bound to a verbs object
    m_points.push_back({ attr.counter_desc, attr.index });
    m_slots = std::max(m_slots, attr.index + 1);
    return 0;
}

void flow_counters::fill(uint64_t* values,
                         uint32_t count,
                         uint64_t packets,
                         uint64_t bytes) const
{
    std::fill(values, values + count, 0);
    // Points sharing an index add up there (man page).
    for (const point& p : m_points)
        values[p.index] += p.description == IBV_COUNTER_PACKETS ? packets : bytes;
}

int flow_counters::read(uint64_t* values, uint32_t count, uint32_t flags)
{
    if ((flags & ~uint32_t(IBV_READ_COUNTERS_ATTR_PREFER_CACHED)) != 0)
        return EOPNOTSUPP;
    std::lock_guard<std::mutex> lock(m_mutex);
    // The kernel has nothing to read until a flow has bound the counters, and wants
    // room for every index that was defined.
    if (!m_ever_bound || values == nullptr || count < m_slots)
        return EINVAL;
    const uint64_t packets = m_packets.load();
    const uint64_t bytes = m_bytes.load();
    const auto now = std::chrono::steady_clock::now();
    if (flags & IBV_READ_COUNTERS_ATTR_PREFER_CACHED) {
        if (now - m_cached_at >= cache_period) {
            m_cached_packets = packets;
            m_cached_bytes = bytes;
            m_cached_at = now;
        }
        fill(values, count, m_cached_packets, m_cached_bytes);
        return 0;
    }
    fill(values, count, packets, bytes);
    return 0;
}

int flow_counters::bind(std::string& reason)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_points.empty()) {
        reason = "the counters have no point attached (ibv_attach_counters_point_flow "
                 "with a NULL flow first)";
        return EINVAL;
    }
    if (m_bound) {
        // mlx5's kernel driver refuses a second flow with the same counters (EINVAL),
        // although the man page describes accumulation.
        reason = "the counters are already bound to a flow; mlx5 takes one flow per "
                 "counters object";
        return EINVAL;
    }
    m_bound = true;
    m_ever_bound = true;
    m_cached_at = std::chrono::steady_clock::now();
    return 0;
}

void flow_counters::unbind()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_bound = false;
}

namespace operations {

ibv_counters* create_counters(ibv_context* context, ibv_counters_init_attr* attr)
{
    return create_in_context(context,
                             &device_context::live_counters,
                             [attr](device_context& emulated) -> flow_counters* {
                                 if (attr == nullptr || attr->comp_mask != 0) {
                                     errno = attr == nullptr ? EINVAL : EOPNOTSUPP;
                                     return nullptr;
                                 }
                                 trace("counters object created");
                                 return new flow_counters(emulated);
                             });
}

ibv_counters* create_counters_unsupported(ibv_context*, ibv_counters_init_attr*)
{
    errno = EOPNOTSUPP;
    return nullptr;
}

int destroy_counters(ibv_counters* counters)
{
    return destroy_in_context<flow_counters>(
        counters,
        &device_context::live_counters,
        [](flow_counters& emulated, device_context&) {
            if (emulated.bound()) {
                trace(
                    "ibv_destroy_counters refused: a flow still counts into it (EBUSY)");
                return EBUSY; // the kernel holds a use count for the flow
            }
            return 0;
        });
}

int attach_counters_point_flow(ibv_counters* counters,
                               ibv_counter_attach_attr* attr,
                               ibv_flow* flow)
{
    flow_counters* emulated = flow_counters::from(counters);
    if (emulated == nullptr || attr == nullptr)
        return EINVAL;
    return emulated->attach_point(*attr, flow);
}

int read_counters(ibv_counters* counters,
                  uint64_t* values,
                  uint32_t count,
                  uint32_t flags)
{
    flow_counters* emulated = flow_counters::from(counters);
    if (emulated == nullptr)
        return EINVAL;
    return emulated->read(values, count, flags);
}

} // namespace operations
} // namespace spead_emu
