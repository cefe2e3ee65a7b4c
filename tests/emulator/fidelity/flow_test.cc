/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Flow specs the emulated NIC cannot steer on are refused, never silently ignored.
#include "verbs_test_support.h"

#include <arpa/inet.h>

#include <cstring>

using namespace verbs_test;

namespace {

void expect_refused(ibv_qp* qp, ibv_flow_attr& attr, int expected_errno, const char* what)
{
    errno = 0;
    flow_ptr flow(ibv_create_flow(qp, &attr));
    EXPECT_EQ(flow, nullptr) << what;
    EXPECT_EQ(errno, expected_errno) << what;
}

} // namespace

TEST(Flow, UnsupportedSpecsAndRuleTypesFailWithEopnotsupp)
{
    raw_queue_pair made = make_raw_queue_pair();
    const uint8_t mac[6] = {};
    udp_flow_rule rule = make_udp_flow_rule(mac, htonl(INADDR_LOOPBACK), 7501);

    udp_flow_rule tcp = rule;
    tcp.udp.type = IBV_FLOW_SPEC_TCP;
    expect_refused(made.qp.get(), tcp.attr, EOPNOTSUPP, "TCP spec");

    udp_flow_rule vlan = rule;
    vlan.eth.mask.vlan_tag = htons(0x0fff);
    expect_refused(made.qp.get(), vlan.attr, EOPNOTSUPP, "VLAN match");

    udp_flow_rule sniffer = rule;
    sniffer.attr.type = IBV_FLOW_ATTR_SNIFFER;
    expect_refused(made.qp.get(), sniffer.attr, EOPNOTSUPP, "sniffer rule");

    udp_flow_rule dont_trap = rule;
    dont_trap.attr.flags = IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
    expect_refused(made.qp.get(), dont_trap.attr, EOPNOTSUPP, "DONT_TRAP");

    struct {
        ibv_flow_attr attr;
        ibv_flow_spec_ipv6 ipv6;
    } ipv6{};
    static_assert(sizeof(ipv6) == sizeof(ibv_flow_attr) + sizeof(ibv_flow_spec_ipv6));
    ipv6.attr = flow_attr(sizeof(ipv6), 1);
    ipv6.ipv6.type = IBV_FLOW_SPEC_IPV6;
    ipv6.ipv6.size = sizeof(ipv6.ipv6);
    expect_refused(made.qp.get(), ipv6.attr, EOPNOTSUPP, "IPv6 spec");

    EXPECT_EQ(ibv_destroy_qp(made.qp.release()), 0) << "no refused rule stayed attached";
}

TEST(Flow, MalformedRulesFailWithEinval)
{
    raw_queue_pair made = make_raw_queue_pair();
    const uint8_t mac[6] = {};
    udp_flow_rule rule = make_udp_flow_rule(mac, htonl(INADDR_LOOPBACK), 7502);

    udp_flow_rule unknown = rule;
    unknown.udp.type = static_cast<ibv_flow_spec_type>(0x77);
    expect_refused(made.qp.get(), unknown.attr, EINVAL, "unknown spec type");

    udp_flow_rule wrong_size = rule;
    wrong_size.ipv4.size = sizeof(wrong_size.ipv4) - 4;
    expect_refused(made.qp.get(), wrong_size.attr, EINVAL, "spec size");

    udp_flow_rule wrong_port = rule;
    wrong_port.attr.port = 2;
    expect_refused(made.qp.get(), wrong_port.attr, EINVAL, "port 2");
}

TEST(Flow, EthernetDestinationIsMatchedExactly)
{
    raw_queue_pair made = make_raw_queue_pair();
    registered_buffer buffer = register_buffer(made.pd.get(), 2048);
    const uint8_t other_mac[6] = { 0x02, 0, 0, 0, 0, 1 };
    udp_flow_rule rule = make_udp_flow_rule(other_mac, htonl(INADDR_LOOPBACK), 7503);
    flow_ptr flow(ibv_create_flow(made.qp.get(), &rule.attr));
    ASSERT_NE(flow, nullptr);
    bring_up(made.qp.get(), IBV_QPS_RTR);
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge()), 0);
    send_kernel_datagram("to 00:00:00:00:00:00", 7503);
    EXPECT_TRUE(poll_completions(made.receive_cq.get(), 1, std::chrono::milliseconds(300))
                    .empty());
}
