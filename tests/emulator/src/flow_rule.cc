/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "flow_rule.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

namespace spead_emu {
namespace {

bool masked_equal(const uint8_t* frame_value,
                  const uint8_t* rule_value,
                  const uint8_t* mask,
                  size_t length)
{
    for (size_t i = 0; i < length; i++) {
        if ((frame_value[i] & mask[i]) != (rule_value[i] & mask[i]))
            return false;
    }
    return true;
}

template <typename T>
bool masked_equal(const T& frame_value, const T& rule_value, const T& mask)
{
    return masked_equal(reinterpret_cast<const uint8_t*>(&frame_value),
                        reinterpret_cast<const uint8_t*>(&rule_value),
                        reinterpret_cast<const uint8_t*>(&mask),
                        sizeof(T));
}

// The name of a spec type the emulator matches on or acts on.
const char* supported_spec_name(unsigned type)
{
    switch (type) {
    case IBV_FLOW_SPEC_ETH:
        return "IBV_FLOW_SPEC_ETH";
    case IBV_FLOW_SPEC_IPV4:
        return "IBV_FLOW_SPEC_IPV4";
    case IBV_FLOW_SPEC_UDP:
        return "IBV_FLOW_SPEC_UDP";
    default:
        return "IBV_FLOW_SPEC_ACTION_COUNT";
    }
}

// Takes a match spec (ETH, IPv4, UDP) of the rule's attribute into its value and
// mask; false when its size is wrong or the rule has one already.
template <typename Spec, typename Filter>
bool take_match(const Spec& spec,
                unsigned size,
                std::optional<Filter>& value,
                std::optional<Filter>& mask)
{
    if (size != sizeof(Spec) || value)
        return false;
    value = spec.val;
    mask = spec.mask;
    return true;
}

const char* known_unsupported_spec(unsigned type)
{
    if (type & IBV_FLOW_SPEC_INNER)
        return "inner (tunnelled) specs";
    switch (type) {
    case IBV_FLOW_SPEC_IPV6:
        return "IBV_FLOW_SPEC_IPV6";
    case IBV_FLOW_SPEC_IPV4_EXT:
        return "IBV_FLOW_SPEC_IPV4_EXT";
    case IBV_FLOW_SPEC_ESP:
        return "IBV_FLOW_SPEC_ESP";
    case IBV_FLOW_SPEC_TCP:
        return "IBV_FLOW_SPEC_TCP";
    case IBV_FLOW_SPEC_VXLAN_TUNNEL:
        return "IBV_FLOW_SPEC_VXLAN_TUNNEL";
    case IBV_FLOW_SPEC_GRE:
        return "IBV_FLOW_SPEC_GRE";
    case IBV_FLOW_SPEC_MPLS:
        return "IBV_FLOW_SPEC_MPLS";
    case IBV_FLOW_SPEC_ACTION_TAG:
        return "IBV_FLOW_SPEC_ACTION_TAG";
    case IBV_FLOW_SPEC_ACTION_DROP:
        return "IBV_FLOW_SPEC_ACTION_DROP";
    case IBV_FLOW_SPEC_ACTION_HANDLE:
        return "IBV_FLOW_SPEC_ACTION_HANDLE";
    default:
        return nullptr;
    }
}

std::string mac_text(const uint8_t* mac)
{
    char text[18];
    snprintf(text,
             sizeof(text),
             "%02x:%02x:%02x:%02x:%02x:%02x",
             mac[0],
             mac[1],
             mac[2],
             mac[3],
             mac[4],
             mac[5]);
    return text;
}

std::string ipv4_text(uint32_t address)
{
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &address, text, sizeof(text));
    return text;
}

} // namespace

int flow_rule::parse(const ibv_flow_attr& attr, flow_rule& rule, std::string& reason)
{
    rule = flow_rule();
    if (attr.comp_mask != 0) {
        reason = "flow_attr.comp_mask must be 0";
        return EINVAL;
    }
    if (attr.type != IBV_FLOW_ATTR_NORMAL) {
        reason =
            "only IBV_FLOW_ATTR_NORMAL rules are emulated (no sniffer/default rules)";
        return EOPNOTSUPP;
    }
    if (attr.flags != 0) {
        reason = "flow flags (DONT_TRAP, EGRESS) are not emulated";
        return EOPNOTSUPP;
    }
    if (attr.port != 1) {
        reason = "flow_attr.port must be 1, the device's only port";
        return EINVAL;
    }
    const auto* cursor = reinterpret_cast<const uint8_t*>(&attr + 1);
    for (unsigned i = 0; i < attr.num_of_specs; i++) {
        // The specs follow the 20-byte ibv_flow_attr back to back, so they are not
        // aligned for their type (UB to read in place): copy each one out first.
        ibv_flow_spec copy{};
        memcpy(&copy.hdr, cursor, sizeof(copy.hdr));
        const unsigned type = copy.hdr.type;
        const unsigned size = copy.hdr.size;
        memcpy(&copy, cursor, size < sizeof(copy) ? size : sizeof(copy));
        const ibv_flow_spec* spec = &copy;
        if (const char* name = known_unsupported_spec(type)) {
            reason = std::string(name) + " is not emulated";
            return EOPNOTSUPP;
        }
        bool taken = false; // false: malformed or repeated
        switch (type) {
        case IBV_FLOW_SPEC_ETH:
            taken = take_match(spec->eth, size, rule.m_eth_value, rule.m_eth_mask);
            if (taken && spec->eth.mask.vlan_tag != 0) {
                reason = "matching on the VLAN tag is not emulated";
                return EOPNOTSUPP;
            }
            break;
        case IBV_FLOW_SPEC_IPV4:
            taken = take_match(spec->ipv4, size, rule.m_ipv4_value, rule.m_ipv4_mask);
            break;
        case IBV_FLOW_SPEC_UDP:
            taken = take_match(spec->tcp_udp, size, rule.m_udp_value, rule.m_udp_mask);
            break;
        case IBV_FLOW_SPEC_ACTION_COUNT: {
            // Packed after the 100 bytes of an ETH+IPv4+UDP rule, the pointer may be
            // unaligned: copy it out.
            ibv_counters* counters = nullptr;
            if (size == sizeof(ibv_flow_spec_counter_action))
                memcpy(&counters,
                       cursor + offsetof(ibv_flow_spec_counter_action, counters),
                       sizeof(counters));
            taken = counters != nullptr && !rule.m_counters;
            if (taken)
                rule.m_counters = counters;
            break;
        }
        default:
            reason = "unknown flow spec type " + std::to_string(type);
            return EINVAL;
        }
        if (!taken) {
            reason = std::string("malformed or repeated ") + supported_spec_name(type);
            return EINVAL;
        }
        cursor += size;
    }
    return 0;
}

bool flow_rule::matches(const parsed_frame& frame) const
{
    if (m_eth_value) {
        ibv_flow_eth_filter seen{};
        memcpy(seen.dst_mac, frame.destination_mac.data(), 6);
        memcpy(seen.src_mac, frame.source_mac.data(), 6);
        seen.ether_type = frame.ether_type;
        seen.vlan_tag = 0;
        if (!masked_equal(seen, *m_eth_value, *m_eth_mask))
            return false;
    }
    // An L3 or L4 spec implies its protocol, as on hardware: a UDP rule never steers
    // a TCP segment even though no spec says "protocol 17".
    if (m_ipv4_value || m_udp_value) {
        if (!frame.is_ipv4)
            return false;
    }
    if (m_ipv4_value) {
        ibv_flow_ipv4_filter seen{ frame.ipv4_source, frame.ipv4_destination };
        if (!masked_equal(seen, *m_ipv4_value, *m_ipv4_mask))
            return false;
    }
    if (m_udp_value) {
        if (!frame.has_udp)
            return false;
        ibv_flow_tcp_udp_filter seen{ frame.udp_destination_port, frame.udp_source_port };
        if (!masked_equal(seen, *m_udp_value, *m_udp_mask))
            return false;
    }
    return true;
}

std::string flow_rule::describe() const
{
    std::string text;
    if (m_eth_value)
        text += "eth dst " + mac_text(m_eth_value->dst_mac) + "/" +
                mac_text(m_eth_mask->dst_mac) + " ";
    if (m_ipv4_value)
        text += "ipv4 dst " + ipv4_text(m_ipv4_value->dst_ip) + "/" +
                ipv4_text(m_ipv4_mask->dst_ip) + " ";
    if (m_udp_value) {
        char port[32];
        snprintf(port,
                 sizeof(port),
                 "%u/0x%04x",
                 ntohs(m_udp_value->dst_port),
                 ntohs(m_udp_mask->dst_port));
        text += std::string("udp dst ") + port + " ";
    }
    if (text.empty())
        text = "match-all ";
    return m_counters ? text + "(counted)" : text;
}

} // namespace spead_emu
