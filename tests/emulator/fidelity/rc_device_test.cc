/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What a RoCE v2 port and an RC-capable device report: the GID table, port attributes
// and the limits an RC QP is created within.
#include "rc_test_support.h"

#include <arpa/inet.h>

using namespace verbs_test;

TEST(RcDevice, GidIndexZeroIsTheIpv4MappedAddressOfTheNetdev)
{
    context_ptr context = open_loopback_device();
    ASSERT_NE(context, nullptr);
    ibv_gid gid{};
    ASSERT_EQ(ibv_query_gid(context.get(), 1, 0, &gid), 0);
    const uint8_t expected[16] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1
    };
    EXPECT_EQ(memcmp(gid.raw, expected, 16), 0);

    ibv_gid_entry entry{};
    ASSERT_EQ(ibv_query_gid_ex(context.get(), 1, 0, &entry, 0), 0);
    EXPECT_EQ(entry.gid_type, IBV_GID_TYPE_ROCE_V2);
    EXPECT_EQ(memcmp(entry.gid.raw, expected, 16), 0);
    EXPECT_EQ(entry.gid_index, 0u);
    EXPECT_EQ(entry.port_num, 1u);
    EXPECT_NE(entry.ndev_ifindex, 0u);
    // An empty entry: ENODATA from the _ex call, the zero GID from the old one.
    EXPECT_EQ(ibv_query_gid_ex(context.get(), 1, 200, &entry, 0), ENODATA);
    ASSERT_EQ(ibv_query_gid(context.get(), 1, 200, &gid), 0);
    EXPECT_EQ(memcmp(gid.raw, ibv_gid{}.raw, 16), 0);

    ibv_gid_entry table[8]{};
    EXPECT_GE(ibv_query_gid_table(context.get(), table, 8, 0), 1);
    EXPECT_EQ(memcmp(table[0].gid.raw, expected, 16), 0);
}

TEST(RcDevice, APortIsRoceWithLidZeroAndAMaxMessageSize)
{
    context_ptr context = open_loopback_device();
    ASSERT_NE(context, nullptr);
    ibv_port_attr port{};
    ASSERT_EQ(ibv_query_port(context.get(), 1, &port), 0);
    EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
    EXPECT_EQ(port.lid, 0);
    EXPECT_EQ(port.max_msg_sz, 1u << 30);
    EXPECT_GE(port.gid_tbl_len, 1);
    __be16 pkey = 0;
    ASSERT_EQ(ibv_query_pkey(context.get(), 1, 0, &pkey), 0);
    EXPECT_EQ(ntohs(pkey), 0xffff);
}

TEST(RcDevice, DeviceLimitsBoundWhatAnRcQpGets)
{
    context_ptr context = open_loopback_device();
    ASSERT_NE(context, nullptr);
    ibv_device_attr attr{};
    ASSERT_EQ(ibv_query_device(context.get(), &attr), 0);
    EXPECT_EQ(attr.atomic_cap, IBV_ATOMIC_NONE);
    EXPECT_GT(attr.max_qp_rd_atom, 0);
    EXPECT_TRUE(attr.device_cap_flags & IBV_DEVICE_RC_RNR_NAK_GEN);

    rc_options options;
    options.inline_data = 256;
    rc_endpoint endpoint = make_rc_endpoint(options);
    ASSERT_NE(endpoint.qp, nullptr);
    EXPECT_EQ(endpoint.qp->qp_type, IBV_QPT_RC);
    ibv_qp_attr got{};
    ibv_qp_init_attr init{};
    ASSERT_EQ(ibv_query_qp(endpoint.qp.get(), &got, IBV_QP_CAP, &init), 0);
    EXPECT_GE(init.cap.max_inline_data, 256u);
    EXPECT_EQ(init.qp_type, IBV_QPT_RC);

    ibv_qp_init_attr too_big{};
    too_big.send_cq = endpoint.send_cq.get();
    too_big.recv_cq = endpoint.receive_cq.get();
    too_big.qp_type = IBV_QPT_RC;
    too_big.cap.max_send_wr = attr.max_qp_wr + 1;
    too_big.cap.max_recv_wr = 1;
    EXPECT_EQ(ibv_create_qp(endpoint.pd.get(), &too_big), nullptr);
    EXPECT_EQ(errno, EINVAL);
    too_big.cap.max_send_wr = 1;
    too_big.cap.max_send_sge = attr.max_sge + 1;
    EXPECT_EQ(ibv_create_qp(endpoint.pd.get(), &too_big), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

TEST(RcDevice, FlowsAndFrameCountersAreForRawPacketQpsOnly)
{
    rc_endpoint endpoint = make_rc_endpoint();
    ASSERT_NE(endpoint.qp, nullptr);
    const uint8_t loopback_mac[6] = {};
    udp_flow_rule rule = make_udp_flow_rule(loopback_mac, htonl(INADDR_LOOPBACK), 7777);
    errno = 0;
    EXPECT_EQ(ibv_create_flow(endpoint.qp.get(), &rule.attr), nullptr);
    EXPECT_EQ(errno, EINVAL);
    spead_emu_counters counters{};
    EXPECT_EQ(emulator().query_qp_counters(endpoint.qp.get(), &counters), EINVAL);
}
