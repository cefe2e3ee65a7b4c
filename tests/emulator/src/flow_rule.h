/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// A steering rule built from ibv_create_flow's specs, and its match against a frame.
#ifndef SPEAD_EMU_FLOW_RULE_H
#define SPEAD_EMU_FLOW_RULE_H

#include "frame.h"

#include <infiniband/verbs.h>

#include <optional>
#include <string>

namespace spead_emu {

class flow_rule
{
public:
    // Builds the rule, or returns the errno ibv_create_flow reports: EOPNOTSUPP for
    // anything the emulated NIC does not steer on (it must never be silently ignored),
    // EINVAL for malformed attributes.
    static int parse(const ibv_flow_attr& attr, flow_rule& rule, std::string& reason);

    bool matches(const parsed_frame& frame) const;
    std::string describe() const;
    // The counters of an IBV_FLOW_SPEC_ACTION_COUNT spec, unchecked (the flow binds
    // them), or nullptr.
    ibv_counters* counters() const { return m_counters; }

private:
    std::optional<ibv_flow_eth_filter> m_eth_value, m_eth_mask;
    std::optional<ibv_flow_ipv4_filter> m_ipv4_value, m_ipv4_mask;
    std::optional<ibv_flow_tcp_udp_filter> m_udp_value, m_udp_mask;
    ibv_counters* m_counters = nullptr;
};

} // namespace spead_emu

#endif
