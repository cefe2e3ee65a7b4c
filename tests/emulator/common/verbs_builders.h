/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Verbs attribute structs that the fidelity tests and the traffic programs fill alike:
// a raw-packet QP's init attributes and the ETH + IPv4 + UDP flow rule of a receiver.
#ifndef SPEAD_EMU_VERBS_BUILDERS_H
#define SPEAD_EMU_VERBS_BUILDERS_H

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstring>

namespace verbs_builders {

// A QP of \p type whose completions go to \p send_cq and \p receive_cq (the same CQ when
// only one is given); the caller sets the capacities it needs.
inline ibv_qp_init_attr qp_init_attr(ibv_cq* send_cq,
                                     ibv_cq* receive_cq = nullptr,
                                     ibv_qp_type type = IBV_QPT_RAW_PACKET)
{
    ibv_qp_init_attr attr{};
    attr.send_cq = send_cq;
    attr.recv_cq = receive_cq == nullptr ? send_cq : receive_cq;
    attr.qp_type = type;
    return attr;
}

// As above, with the queues' capabilities (ibv_qp_cap: send WRs, receive WRs, send SGEs,
// receive SGEs, inline bytes).
inline ibv_qp_init_attr
qp_init_attr(ibv_cq* send_cq, ibv_cq* receive_cq, ibv_qp_type type, const ibv_qp_cap& cap)
{
    ibv_qp_init_attr attr = qp_init_attr(send_cq, receive_cq, type);
    attr.cap = cap;
    return attr;
}

// The attribute that heads a normal flow rule on port 1, followed by \p num_of_specs
// specs in \p size bytes in all.
inline ibv_flow_attr flow_attr(uint16_t size, uint8_t num_of_specs)
{
    ibv_flow_attr attr{};
    attr.type = IBV_FLOW_ATTR_NORMAL;
    attr.size = size;
    attr.num_of_specs = num_of_specs;
    attr.port = 1;
    return attr;
}

// The ETH + IPv4 + UDP rule a SPEAD receiver creates: exact destination MAC, IPv4
// destination (mask 0 when the address is 0.0.0.0) and UDP destination port. The specs
// follow the attribute back to back (every size is a multiple of 4, so no padding).
struct udp_flow_rule {
    ibv_flow_attr attr;
    ibv_flow_spec_eth eth;
    ibv_flow_spec_ipv4 ipv4;
    ibv_flow_spec_tcp_udp udp;
};
static_assert(sizeof(udp_flow_rule) == sizeof(ibv_flow_attr) + sizeof(ibv_flow_spec_eth) +
                                           sizeof(ibv_flow_spec_ipv4) +
                                           sizeof(ibv_flow_spec_tcp_udp),
              "flow specs must be contiguous");

// \p destination in network byte order, \p port in host byte order.
inline udp_flow_rule
make_udp_flow_rule(const uint8_t mac[6], in_addr_t destination, uint16_t port)
{
    udp_flow_rule rule{};
    rule.attr = flow_attr(sizeof(rule), 3);
    rule.eth.type = IBV_FLOW_SPEC_ETH;
    rule.eth.size = sizeof(rule.eth);
    memcpy(rule.eth.val.dst_mac, mac, 6);
    memset(rule.eth.mask.dst_mac, 0xff, 6);
    rule.ipv4.type = IBV_FLOW_SPEC_IPV4;
    rule.ipv4.size = sizeof(rule.ipv4);
    rule.ipv4.val.dst_ip = destination;
    rule.ipv4.mask.dst_ip = destination == htonl(INADDR_ANY) ? 0 : 0xffffffff;
    rule.udp.type = IBV_FLOW_SPEC_UDP;
    rule.udp.size = sizeof(rule.udp);
    rule.udp.val.dst_port = htons(port);
    rule.udp.mask.dst_port = 0xffff;
    return rule;
}

} // namespace verbs_builders

#endif
