/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// rdma_cm's event channels and address and route resolution on the emulated device.
#include "cm_test_support.h"
#include "verbs_test_support.h"

#include <fcntl.h>

namespace {

using namespace cm_test;

TEST(CmAddress, ResolvingAReachableAddressGivesAddrThenRouteResolvedOnThePollableFd)
{
    channel_ptr channel = make_channel();
    id_ptr id = make_id(channel.get());
    ASSERT_EQ(start_resolving(id.get(), "127.0.0.1", 7150), 0);
    event_copy resolved = expect_event(channel.get(), RDMA_CM_EVENT_ADDR_RESOLVED);
    EXPECT_EQ(resolved.status, 0);
    EXPECT_EQ(resolved.id, id.get());
    // The routing picked the source address, and with it the device.
    ASSERT_NE(id->verbs, nullptr);
    EXPECT_STREQ(ibv_get_device_name(id->verbs->device), "emu_lo");
    EXPECT_EQ(rdma_get_local_addr(id.get())->sa_family, AF_INET);
    EXPECT_EQ(id->route.addr.src_sin.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    EXPECT_EQ(rdma_get_dst_port(id.get()), htons(7150));
    EXPECT_NE(rdma_get_src_port(id.get()), 0);
    // RoCEv2 addressing: the GIDs are the IPv4-mapped addresses.
    EXPECT_EQ(id->route.addr.addr.ibaddr.dgid.raw[10], 0xff);
    EXPECT_EQ(id->route.addr.addr.ibaddr.dgid.raw[12], 127);

    ASSERT_EQ(rdma_resolve_route(id.get(), 2000), 0);
    expect_event(channel.get(), RDMA_CM_EVENT_ROUTE_RESOLVED);
    EXPECT_EQ(id->route.num_paths, 1);
}

TEST(CmAddress, AnUnroutableDestinationFailsTheCallWithEnetunreach)
{
    channel_ptr channel = make_channel();
    id_ptr id = make_id(channel.get());
    // The test's namespace has loopback only: nothing routes to 192.0.2.1. The
    // kernel's route lookup fails rdma_resolve_addr itself; no event follows.
    errno = 0;
    EXPECT_EQ(start_resolving(id.get(), "192.0.2.1", 7150), -1);
    EXPECT_EQ(errno, ENETUNREACH);
    pollfd idle{ channel->fd, POLLIN, 0 };
    EXPECT_EQ(poll(&idle, 1, 0), 0);
}

TEST(CmAddress, ARouteOutOfAnInterfaceWithoutDeviceGivesAddrErrorEnodev)
{
    verbs_test::run_command("ip link add emu-a type veth peer name emu-b && "
                            "ip addr add 10.99.0.1/24 dev emu-a && ip link set emu-a up");
    channel_ptr channel = make_channel();
    id_ptr id = make_id(channel.get());
    ASSERT_EQ(start_resolving(id.get(), "10.99.0.2", 7150), 0);
    event_copy error = expect_event(channel.get(), RDMA_CM_EVENT_ADDR_ERROR);
    EXPECT_EQ(error.status, -ENODEV);
}

TEST(CmAddress, ResolvingTheRouteBeforeTheAddressFailsWithEinval)
{
    channel_ptr channel = make_channel();
    id_ptr id = make_id(channel.get());
    errno = 0;
    EXPECT_EQ(rdma_resolve_route(id.get(), 2000), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST(CmAddress, ANonblockingChannelSaysEagainWhenNoEventIsQueued)
{
    channel_ptr channel = make_channel();
    const int flags = fcntl(channel->fd, F_GETFL);
    ASSERT_EQ(fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK), 0);
    rdma_cm_event* event = nullptr;
    errno = 0;
    EXPECT_EQ(rdma_get_cm_event(channel.get(), &event), -1);
    EXPECT_EQ(errno, EAGAIN);
    pollfd idle{ channel->fd, POLLIN, 0 };
    EXPECT_EQ(poll(&idle, 1, 0), 0);
}

TEST(CmAddress, EachEventIsReadOnceAndInOrder)
{
    channel_ptr channel = make_channel();
    id_ptr first = make_id(channel.get());
    id_ptr second = make_id(channel.get());
    ASSERT_EQ(start_resolving(first.get(), "127.0.0.1", 7150), 0);
    ASSERT_EQ(start_resolving(second.get(), "127.0.0.1", 7150), 0);
    EXPECT_EQ(next_event(channel.get()).id, first.get());
    EXPECT_EQ(next_event(channel.get()).id, second.get());
    pollfd idle{ channel->fd, POLLIN, 0 };
    EXPECT_EQ(poll(&idle, 1, 0), 0);
}

TEST(CmAddress, BindingAPortInUseFailsWithEaddrinuse)
{
    listener first;
    id_ptr second = make_id(first.channel.get());
    sockaddr_in address = ipv4("127.0.0.1", first.port);
    errno = 0;
    EXPECT_EQ(rdma_bind_addr(second.get(), reinterpret_cast<sockaddr*>(&address)), -1);
    EXPECT_EQ(errno, EADDRINUSE);
}

TEST(CmAddress, EventStringsAreLibrdmacmsNames)
{
    EXPECT_STREQ(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED");
    EXPECT_STREQ(rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT),
                 "RDMA_CM_EVENT_TIMEWAIT_EXIT");
}

TEST(CmAddress, ResolvingTheRouteOnAPortThatIsDownGivesRouteError)
{
    channel_ptr channel = make_channel();
    id_ptr id = make_id(channel.get());
    ASSERT_EQ(start_resolving(id.get(), "127.0.0.1", 7150), 0);
    expect_event(channel.get(), RDMA_CM_EVENT_ADDR_RESOLVED);
    verbs_test::run_command("ip link set lo down");
    const int result = rdma_resolve_route(id.get(), 2000);
    event_copy error = next_event(channel.get());
    verbs_test::run_command("ip link set lo up");
    ASSERT_EQ(result, 0);
    EXPECT_EQ(error.type, RDMA_CM_EVENT_ROUTE_ERROR) << rdma_event_str(error.type);
    EXPECT_EQ(error.status, -ENETUNREACH);
}

} // namespace
