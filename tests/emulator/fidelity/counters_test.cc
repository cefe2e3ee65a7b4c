/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Flow counters (ibv_create_counters, ibv_attach_counters_point_flow, ibv_read_counters,
// IBV_FLOW_SPEC_ACTION_COUNT) as mlx5 implements them, the port's out_of_buffer counter
// behind ibdev_path, and the emulator's count of live objects.
#include "verbs_test_support.h"

#include <arpa/inet.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

using namespace verbs_test;

namespace {

// The receiver's ETH + IPv4 + UDP rule with a count action after it. Packed, as an
// application lays out its rule: the counters pointer is then unaligned.
struct counted_flow_rule {
    udp_flow_rule match;
    ibv_flow_spec_counter_action count;
} __attribute__((packed, aligned(8)));

// The rule starts with its attribute (taking the member's address would warn: packed).
ibv_flow_attr* attr_of(counted_flow_rule& rule)
{
    return reinterpret_cast<ibv_flow_attr*>(&rule);
}

counters_ptr make_counters(ibv_context* context,
                           std::initializer_list<ibv_counter_attach_attr> points)
{
    ibv_counters_init_attr init{};
    counters_ptr counters(ibv_create_counters(context, &init));
    EXPECT_NE(counters, nullptr) << "ibv_create_counters: " << strerror(errno);
    for (ibv_counter_attach_attr point : points)
        EXPECT_EQ(ibv_attach_counters_point_flow(counters.get(), &point, nullptr), 0);
    return counters;
}

counters_ptr make_packet_counter(ibv_context* context)
{
    return make_counters(context, { { IBV_COUNTER_PACKETS, 0, 0 } });
}

counted_flow_rule counted_loopback_rule(uint16_t port, ibv_counters* counters)
{
    const uint8_t loopback_mac[6] = {};
    counted_flow_rule rule{};
    rule.match = make_udp_flow_rule(loopback_mac, htonl(INADDR_LOOPBACK), port);
    rule.match.attr.size = sizeof(rule);
    rule.match.attr.num_of_specs = 4;
    rule.count.type = IBV_FLOW_SPEC_ACTION_COUNT;
    rule.count.size = sizeof(rule.count);
    rule.count.counters = counters;
    return rule;
}

flow_ptr steer_counted(ibv_qp* qp, uint16_t port, ibv_counters* counters)
{
    counted_flow_rule rule = counted_loopback_rule(port, counters);
    flow_ptr flow(ibv_create_flow(qp, attr_of(rule)));
    EXPECT_NE(flow, nullptr) << "ibv_create_flow: " << strerror(errno);
    return flow;
}

uint64_t read_packets(ibv_counters* counters, uint32_t flags = 0)
{
    uint64_t value = ~uint64_t(0);
    EXPECT_EQ(ibv_read_counters(counters, &value, 1, flags), 0);
    return value;
}

// Waits (bounded) until the QP has seen `frames` frames in all.
void wait_for_frames(ibv_qp* qp, uint64_t frames)
{
    spead_emu_counters counters{};
    for (int tries = 0; tries < 300; tries++) {
        ASSERT_EQ(emulator().query_qp_counters(qp, &counters), 0);
        if (counters.rx_frames_delivered + counters.rx_frames_dropped_no_receive +
                counters.rx_frames_dropped_qp_not_ready >=
            frames)
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "the frames never reached the QP";
}

std::string read_file(const std::string& path)
{
    std::ifstream file(path);
    std::string text((std::istreambuf_iterator<char>(file)),
                     std::istreambuf_iterator<char>());
    return file ? text : "<missing>";
}

std::string out_of_buffer_path(ibv_context* context)
{
    return std::string(context->device->ibdev_path) +
           "/ports/1/hw_counters/out_of_buffer";
}

} // namespace

TEST(FlowCounters, CountEveryFrameTheFlowSteersIncludingThoseDroppedForWantOfAReceive)
{
    raw_queue_pair made = make_raw_queue_pair();
    registered_buffer buffer = register_buffer(made.pd.get(), 2 * 1024);
    counters_ptr counters = make_packet_counter(made.context.get());
    flow_ptr flow = steer_counted(made.qp.get(), 7601, counters.get());
    bring_up(made.qp.get(), IBV_QPS_RTR);
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge(0, 1024)), 0);
    ASSERT_EQ(post_one_receive(made.qp.get(), 2, buffer.sge(1024, 1024)), 0);
    for (int i = 0; i < 5; i++)
        send_kernel_datagram("counted", 7601);
    send_kernel_datagram("another port: not counted", 7602);
    wait_for_frames(made.qp.get(), 5);

    EXPECT_EQ(poll_completions(made.receive_cq.get(), 2).size(), 2u);
    // matched − completed = what the NIC dropped
    EXPECT_EQ(read_packets(counters.get()), 5u);
    spead_emu_counters qp{};
    ASSERT_EQ(emulator().query_qp_counters(made.qp.get(), &qp), 0);
    EXPECT_EQ(qp.rx_frames_dropped_no_receive, 3u);
}

TEST(FlowCounters, CountFramesThatArriveBeforeTheQpIsReady)
{
    raw_queue_pair made = make_raw_queue_pair();
    counters_ptr counters = make_packet_counter(made.context.get());
    ASSERT_EQ(move_to_init(made.qp.get()), 0);
    flow_ptr flow = steer_counted(made.qp.get(), 7603, counters.get());
    send_kernel_datagram("too early", 7603);
    wait_for_frames(made.qp.get(), 1);
    EXPECT_EQ(read_packets(counters.get()), 1u);
}

TEST(FlowCounters, PointsFillTheirIndexWithPacketsOrBytes)
{
    raw_queue_pair made = make_raw_queue_pair();
    counters_ptr counters =
        make_counters(made.context.get(),
                      { { IBV_COUNTER_BYTES, 0, 0 }, { IBV_COUNTER_PACKETS, 2, 0 } });
    flow_ptr flow = steer_counted(made.qp.get(), 7604, counters.get());
    bring_up(made.qp.get(), IBV_QPS_RTR);
    send_kernel_datagram("12345", 7604);
    send_kernel_datagram("1234567890", 7604);
    wait_for_frames(made.qp.get(), 2);

    uint64_t values[3] = { 1, 1, 1 };
    ASSERT_EQ(ibv_read_counters(counters.get(), values, 3, 0), 0);
    EXPECT_EQ(values[0], 2 * udp_frame_overhead + 15) << "bytes: whole frames";
    EXPECT_EQ(values[1], 0u) << "an index without a point reads 0";
    EXPECT_EQ(values[2], 2u) << "packets";
    EXPECT_EQ(ibv_read_counters(counters.get(), values, 2, 0), EINVAL)
        << "fewer values than the highest index needs";
}

TEST(FlowCounters, AttachOnlyStaticallyBeforeAFlowBindsThem)
{
    raw_queue_pair made = make_raw_queue_pair();
    counters_ptr counters = make_packet_counter(made.context.get());
    flow_ptr other = steer_loopback_udp(made.qp.get(), 7605);
    ibv_counter_attach_attr attach{ IBV_COUNTER_PACKETS, 1, 0 };
    EXPECT_EQ(ibv_attach_counters_point_flow(counters.get(), &attach, other.get()),
              ENOTSUP)
        << "mlx5 binds only when the flow is created";
    ibv_counter_attach_attr unknown{ static_cast<ibv_counter_description>(7), 1, 0 };
    EXPECT_EQ(ibv_attach_counters_point_flow(counters.get(), &unknown, nullptr), ENOTSUP);
    ibv_counter_attach_attr masked{ IBV_COUNTER_PACKETS, 1, 1 };
    EXPECT_EQ(ibv_attach_counters_point_flow(counters.get(), &masked, nullptr),
              EOPNOTSUPP);

    flow_ptr flow = steer_counted(made.qp.get(), 7606, counters.get());
    EXPECT_EQ(ibv_attach_counters_point_flow(counters.get(), &attach, nullptr), EBUSY)
        << "no attach while bound";
}

TEST(FlowCounters, ReadingBeforeAFlowBindsThemIsEinval)
{
    raw_queue_pair made = make_raw_queue_pair();
    counters_ptr counters = make_packet_counter(made.context.get());
    uint64_t value = 0;
    EXPECT_EQ(ibv_read_counters(counters.get(), &value, 1, 0), EINVAL);
    EXPECT_EQ(ibv_read_counters(counters.get(), &value, 1, 1u << 7), EOPNOTSUPP)
        << "unknown flags";
}

TEST(FlowCounters, OneFlowPerCountersObjectAsOnMlx5)
{
    raw_queue_pair made = make_raw_queue_pair();
    counters_ptr counters = make_packet_counter(made.context.get());
    flow_ptr first = steer_counted(made.qp.get(), 7607, counters.get());
    counted_flow_rule second = counted_loopback_rule(7608, counters.get());
    errno = 0;
    EXPECT_EQ(ibv_create_flow(made.qp.get(), attr_of(second)), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

TEST(FlowCounters, AFlowNeedsCountersWithAPoint)
{
    raw_queue_pair made = make_raw_queue_pair();
    counters_ptr empty = make_counters(made.context.get(), {});
    counted_flow_rule rule = counted_loopback_rule(7609, empty.get());
    errno = 0;
    EXPECT_EQ(ibv_create_flow(made.qp.get(), attr_of(rule)), nullptr);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(ibv_destroy_qp(made.qp.release()), 0) << "no refused flow stayed attached";
}

TEST(FlowCounters, BoundCountersCannotBeDestroyedUntilTheirFlowIs)
{
    raw_queue_pair made = make_raw_queue_pair();
    counters_ptr counters = make_packet_counter(made.context.get());
    flow_ptr flow = steer_counted(made.qp.get(), 7610, counters.get());
    EXPECT_EQ(ibv_destroy_counters(counters.get()), EBUSY);
    flow.reset();
    EXPECT_EQ(ibv_destroy_counters(counters.release()), 0);
}

TEST(FlowCounters, PreferCachedReadsLagTheDeviceByUpToASecond)
{
    raw_queue_pair made = make_raw_queue_pair();
    counters_ptr counters = make_packet_counter(made.context.get());
    flow_ptr flow = steer_counted(made.qp.get(), 7611, counters.get());
    bring_up(made.qp.get(), IBV_QPS_RTR);
    EXPECT_EQ(read_packets(counters.get(), IBV_READ_COUNTERS_ATTR_PREFER_CACHED), 0u);
    send_kernel_datagram("one", 7611);
    wait_for_frames(made.qp.get(), 1);
    EXPECT_EQ(read_packets(counters.get(), IBV_READ_COUNTERS_ATTR_PREFER_CACHED), 0u)
        << "the driver's cache is refreshed about once a second";
    EXPECT_EQ(read_packets(counters.get()), 1u) << "a volatile read asks the device";
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    EXPECT_EQ(read_packets(counters.get(), IBV_READ_COUNTERS_ATTR_PREFER_CACHED), 1u);
}

TEST(PortHwCounters, OutOfBufferBehindIbdevPathCountsFramesWithNoReceivePosted)
{
    raw_queue_pair made = make_raw_queue_pair();
    const std::string path = out_of_buffer_path(made.context.get());
    EXPECT_EQ(read_file(path), "0\n") << path;
    flow_ptr flow = steer_loopback_udp(made.qp.get(), 7612);
    bring_up(made.qp.get(), IBV_QPS_RTR);
    for (int i = 0; i < 4; i++)
        send_kernel_datagram("no receive posted", 7612);
    wait_for_frames(made.qp.get(), 4);
    EXPECT_EQ(read_file(path), "4\n");
    spead_emu_counters port{};
    ASSERT_EQ(emulator().query_port_counters(made.context.get(), &port), 0);
    EXPECT_EQ(port.rx_frames_dropped_no_receive, 4u);
}

TEST(LiveObjects, EveryObjectIsCountedWhileItExists)
{
    spead_emu_live_objects before{};
    {
        raw_queue_pair made = make_raw_queue_pair({ 16, 16, 2, 1, 64, true });
        ASSERT_EQ(emulator().query_live_objects(made.context.get(), &before), 0);
        registered_buffer buffer = register_buffer(made.pd.get(), 1024);
        counters_ptr counters = make_packet_counter(made.context.get());
        flow_ptr flow = steer_counted(made.qp.get(), 7613, counters.get());
        spead_emu_live_objects live{};
        ASSERT_EQ(emulator().query_live_objects(made.context.get(), &live), 0);
        // PDs, channels, CQs, QPs, MRs, flows, counters.
        EXPECT_EQ(live, (spead_emu_live_objects{ 1, 1, 2, 1, 1, 1, 1 }));
        flow.reset();
        counters.reset();
        buffer.mr.reset();
        made.qp.reset();
        ASSERT_EQ(emulator().query_live_objects(made.context.get(), &live), 0);
        EXPECT_EQ(live, (spead_emu_live_objects{ 1, 1, 2, 0, 0, 0, 0 }));
    }
    EXPECT_EQ(before.queue_pairs, 1);
    EXPECT_EQ(before.flows, 0);
}
