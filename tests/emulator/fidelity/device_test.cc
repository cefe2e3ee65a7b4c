/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Devices, queries and rdma_cm address resolution.
#include "verbs_test_support.h"

#include <arpa/inet.h>
#include <endian.h>
#include <rdma/rdma_cma.h>

#include <cstdlib>
#include <cstring>

using namespace verbs_test;

TEST(DeviceList, OneDevicePerNamedNetdevAndNoneForMissingOnes)
{
    setenv("SPEAD_EMU_NETDEVS", "lo,no-such-netdev", 1);
    int count = -1;
    ibv_device** devices = ibv_get_device_list(&count);
    setenv("SPEAD_EMU_NETDEVS", "lo", 1);
    ASSERT_NE(devices, nullptr);
    ASSERT_EQ(count, 1);
    EXPECT_STREQ(ibv_get_device_name(devices[0]), "emu_lo");
    EXPECT_EQ(devices[1], nullptr);
    EXPECT_STREQ(emulator().device_netdev(devices[0]), "lo");
    ibv_free_device_list(devices);
}

TEST(DeviceList, NodeGuidIsTheEui64OfTheNetdevMac)
{
    int count = 0;
    ibv_device** devices = ibv_get_device_list(&count);
    ASSERT_EQ(count, 1);
    // loopback's MAC is 00:00:00:00:00:00: U/L bit flipped, ff:fe in the middle.
    EXPECT_EQ(be64toh(ibv_get_device_guid(devices[0])), 0x020000fffe000000ull);
    ibv_free_device_list(devices);
}

TEST(DeviceQuery, AdvertisesFlowSteeringAndIpChecksumOffload)
{
    context_ptr context = open_loopback_device();
    const ibv_device_attr_ex attr = query_device_ex(context.get());
    EXPECT_TRUE(attr.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM);
    EXPECT_TRUE(attr.device_cap_flags_ex & IBV_DEVICE_MANAGED_FLOW_STEERING);
    EXPECT_TRUE(attr.orig_attr.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM);
    EXPECT_EQ(attr.orig_attr.phys_port_cnt, 1);
    EXPECT_EQ(attr.orig_attr.max_qp_wr, 32768);
    EXPECT_EQ(attr.orig_attr.max_sge, 30);
    EXPECT_EQ(attr.orig_attr.max_cqe, (1 << 22) - 1);
    EXPECT_EQ(attr.orig_attr.max_mr_size, UINT64_MAX);
    EXPECT_EQ(attr.packet_pacing_caps.qp_rate_limit_max, 0u) << "pacing is not emulated";
    EXPECT_GT(context->num_comp_vectors, 0);

    ibv_device_attr plain{};
    ASSERT_EQ(ibv_query_device(context.get(), &plain), 0);
    EXPECT_EQ(plain.node_guid, attr.orig_attr.node_guid);
}

TEST(PortQuery, PortOneIsActiveEthernetWithTheMtuOfItsNetdev)
{
    context_ptr context = open_loopback_device();
    ibv_port_attr attr{};
    ASSERT_EQ(ibv_query_port(context.get(), 1, &attr), 0);
    EXPECT_EQ(attr.link_layer, IBV_LINK_LAYER_ETHERNET);
    EXPECT_EQ(attr.state, IBV_PORT_ACTIVE);
    EXPECT_EQ(attr.active_mtu, IBV_MTU_4096); // loopback: 65536

    set_loopback_mtu(1500);
    ASSERT_EQ(ibv_query_port(context.get(), 1, &attr), 0);
    EXPECT_EQ(attr.active_mtu, IBV_MTU_1024); // RoCE: 1500 minus RoCE headers
    set_loopback_mtu(65536);

    EXPECT_EQ(ibv_query_port(context.get(), 2, &attr), EINVAL);
}

TEST(RdmaCm, BindingAnAddressGivesTheDeviceOfItsNetdev)
{
    rdma_cm_id* first = nullptr;
    rdma_cm_id* second = nullptr;
    ASSERT_EQ(rdma_create_id(nullptr, &first, nullptr, RDMA_PS_UDP), 0);
    ASSERT_EQ(rdma_create_id(nullptr, &second, nullptr, RDMA_PS_UDP), 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(rdma_bind_addr(first, reinterpret_cast<sockaddr*>(&address)), 0);
    ASSERT_EQ(rdma_bind_addr(second, reinterpret_cast<sockaddr*>(&address)), 0);
    ASSERT_NE(first->verbs, nullptr);
    EXPECT_STREQ(ibv_get_device_name(first->verbs->device), "emu_lo");
    EXPECT_EQ(first->port_num, 1);
    EXPECT_EQ(first->verbs, second->verbs) << "librdmacm shares one context per device";
    EXPECT_EQ(rdma_destroy_id(second), 0);
    EXPECT_EQ(rdma_destroy_id(first), 0);
}

TEST(RdmaCm, AddressOfAnInterfaceWithoutDeviceFailsWithEnodev)
{
    run_command("ip link add emu-a type veth peer name emu-b && "
                "ip addr add 10.99.0.1/24 dev emu-a && ip link set emu-a up");
    rdma_cm_id* id = nullptr;
    ASSERT_EQ(rdma_create_id(nullptr, &id, nullptr, RDMA_PS_UDP), 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    inet_pton(AF_INET, "10.99.0.1", &address.sin_addr);
    EXPECT_EQ(rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&address)), -1);
    EXPECT_EQ(errno, ENODEV);
    inet_pton(AF_INET, "192.0.2.1", &address.sin_addr); // nobody's address
    EXPECT_EQ(rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&address)), -1);
    EXPECT_EQ(errno, EADDRNOTAVAIL);
    EXPECT_EQ(rdma_destroy_id(id), 0);
}
