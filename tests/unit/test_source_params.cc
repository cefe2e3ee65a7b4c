/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// plan_source: spead.source's parameters checked once, each error naming its parameter,
// and turned into the configs the block runs with. (The Python QA checks every bad
// parameter through the block; these pin what the plan holds.)

#include "mapping/source_plan.h"
#include "plan_errors.h"
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace {

using namespace gr::spead;

using spead_test::error_of;
using spead_test::names;
const auto test_logger = spead_test::plan_logger;

TEST(SourceParams, DefaultsPlanAUdpSourceOnPort7148)
{
    const source_plan plan = spead_test::plan_of(spead_test::source_options());
    EXPECT_EQ(plan.transport.kind, transport_kind::udp);
    EXPECT_FALSE(plan.transport.automatic);
    ASSERT_EQ(plan.udp.get_endpoints().size(), 1u);
    EXPECT_EQ(plan.udp.get_endpoints()[0].port(), 7148);
    EXPECT_EQ(plan.udp.get_max_size(), 9200u);
    EXPECT_EQ(plan.item_size, 8u); // complex_float
    EXPECT_EQ(plan.max_items, 16u * 1024 * 1024 / 8);
    EXPECT_EQ(plan.stream.get_max_heaps(), 4u);
    EXPECT_EQ(plan.stream.get_queue_heaps(), 32u); // 512 MiB of 16 MiB heaps
    EXPECT_EQ(plan.mapping.len_tag_key, "packet_len");
    EXPECT_EQ(plan.mapping.byte_order, byte_order_mode::automatic);
    EXPECT_EQ(plan.stats_interval.count(), 0.0);
}

TEST(SourceParams, FullQueuePolicyDropsByDefaultBlocksWhenAskedAndNamesABadOne)
{
    EXPECT_EQ(
        spead_test::plan_of(spead_test::source_options()).stream.get_full_queue_policy(),
        recv::full_queue_policy::drop);
    spead_test::source_options p;
    p["full_queue_policy"] = "block";
    EXPECT_EQ(spead_test::plan_of(p).stream.get_full_queue_policy(),
              recv::full_queue_policy::block);
    p["full_queue_policy"] = "wait";
    const std::string what = error_of(p);
    EXPECT_EQ(what.rfind("full_queue_policy: 'wait' is not a policy", 0), 0u) << what;
}

TEST(SourceParams, IPv6EndpointsAreTakenByUdp)
{
    spead_test::source_options p;
    p["endpoints"] = "[::1]:7148,ff14::1:7149";
    const source_plan plan = spead_test::plan_of(p);
    ASSERT_EQ(plan.udp.get_endpoints().size(), 2u);
    EXPECT_TRUE(plan.udp.get_endpoints()[1].address().is_multicast());
    EXPECT_TRUE(plan.udp.get_endpoints()[1].address().is_v6());
}

TEST(SourceParams, AConfigSettersErrorIsRenamedToTheBlockParameter)
{
    spead_test::source_options p;
    p["max_packet_size"] = 10;
    const std::string what = error_of(p);
    EXPECT_EQ(what.rfind("max_packet_size: 10 bytes is out of range; use 64 to 65507", 0),
              0u)
        << what;
}

TEST(SourceParams, EachBadParameterIsNamed)
{
    using bad = spead_test::bad_value<spead_test::source_options>;
    spead_test::expect_each_named(
        spead_test::source_options(),
        { bad{ [](spead_test::source_options& p) { p["vlen"] = 0; }, "vlen" },
          bad{ [](spead_test::source_options& p) { p["transport"] = "infiniband"; },
               "transport" },
          bad{ [](spead_test::source_options& p) { p["max_heap_size"] = 4; },
               "max_heap_size" },
          // timestamp_item needs a rate
          bad{ [](spead_test::source_options& p) { p["timestamp_item"] = 0x1600; },
               "sample_rate" },
          // checked on udp too, so errors do not depend on the machine
          bad{ [](spead_test::source_options& p) { p["max_poll"] = 0; }, "max_poll" },
          bad{ [](spead_test::source_options& p) { p["max_heaps"] = 0; }, "max_heaps" },
          bad{ [](spead_test::source_options& p) {
                  p["transport"] = "pcap";
                  p["endpoints"] = "";
              },
               "capture_file" } });
}

TEST(SourceParams, ACaptureFileIsCheckedWhenTheBlockIsMade)
{
    // A file that is not a capture used to be accepted, and the flowgraph then ended
    // at start with status 0.
    spead_test::source_options p;
    p["transport"] = "pcap";
    p["endpoints"] = "";
    p["capture_file"] = "/etc/passwd";
    EXPECT_EQ(error_of(p).rfind("capture_file: cannot read capture '/etc/passwd': ", 0),
              0u)
        << error_of(p);
    EXPECT_NE(error_of(p).find("give the path of a pcap or pcapng file"),
              std::string::npos);
    p["capture_file"] = "/nonexistent/capture.pcap";
    EXPECT_EQ(error_of(p).rfind(
                  "capture_file: cannot read capture '/nonexistent/capture.pcap'", 0),
              0u)
        << error_of(p);
}

TEST(SourceParams, ACaptureReplaysOnePortAndGetsALongerQueue)
{
    spead_test::source_options p;
    p["transport"] = "pcap";
    p["capture_file"] =
        std::string(GR_SPEAD_VECTORS_DIR) + "/spead64-40_small_desc_stop.pcap";
    p["endpoints"] = ":7148";
    const source_plan plan = spead_test::plan_of(p);
    EXPECT_EQ(plan.transport.kind, transport_kind::pcap);
    EXPECT_EQ(plan.capture_port, 7148);
    EXPECT_EQ(plan.stream.get_queue_heaps(), 64u); // 1 GiB of 16 MiB heaps
    p["endpoints"] = ":7148,:7149";
    EXPECT_EQ(error_of(p).rfind("endpoints: a capture is replayed for one UDP port", 0),
              0u);
}

TEST(SourceParams, TheMappingGetsTheStreamParameters)
{
    spead_test::source_options p;
    p["item_type"] = "sc16";
    p["vlen"] = 4;
    p["payload_item"] = 0x1001;
    p["timestamp_item"] = 0x1600;
    p["sample_rate"] = 1712e6;
    p["sync_time"] = 5;
    p["byte_order"] = "swap";
    p["len_tag_key"] = "";
    const source_plan plan = spead_test::plan_of(p);
    EXPECT_EQ(plan.item_size, 16u);
    EXPECT_EQ(plan.mapping.vlen, 4u);
    EXPECT_EQ(plan.mapping.payload_item, 0x1001u);
    EXPECT_EQ(plan.mapping.timestamp_item, 0x1600u);
    EXPECT_EQ(plan.mapping.sample_rate, 1712e6);
    EXPECT_EQ(plan.mapping.sync_time, 5.0);
    EXPECT_EQ(plan.mapping.byte_order, byte_order_mode::swap);
    EXPECT_EQ(plan.mapping.len_tag_key, "");
}

} // namespace

namespace {
spead_test::source_options continuous_params()
{
    spead_test::source_options p;
    p["endpoints"] = ":7148,:7149";
    p["item_type"] = "int16";
    p["output_mode"] = "continuous";
    p["timestamp_item"] = 0x1600;
    return p;
}
} // namespace

TEST(SourceParams, ContinuousModeMakesAContinuousStreamWithOneOutputPerSubstream)
{
    spead_test::source_options p = continuous_params();
    p["substreams"] = 2;
    p["substream_item"] = 0x1601;
    p["window_heaps"] = 32;
    p["timestamp_step"] = 4096;
    const source_plan plan = spead_test::plan_of(p);
    EXPECT_TRUE(plan.continuous);
    EXPECT_EQ(plan.outputs, 2u);
    ASSERT_TRUE(plan.stream.is_continuous());
    const recv::continuous_config& c = plan.stream.get_continuous();
    EXPECT_EQ(c.timestamp_item, 0x1600u);
    EXPECT_EQ(c.substream_item, 0x1601u);
    EXPECT_EQ(c.window_heaps, 32u);
    EXPECT_EQ(c.timestamp_step, 4096u);
    EXPECT_EQ(c.item_bytes, 2u);
    EXPECT_FALSE(
        spead_test::plan_of(spead_test::source_options()).stream.is_continuous());
}

TEST(SourceParams, FirstSubstreamGivesTheHostsShareOfTheSubstreams)
{
    spead_test::source_options p = continuous_params();
    p["substreams"] = 4;
    p["substream_item"] = 0x1601;
    p["first_substream"] = 8;
    const source_plan plan = spead_test::plan_of(p);
    EXPECT_EQ(plan.outputs, 4u);
    EXPECT_EQ(plan.stream.get_continuous().first_substream, 8u);
    p["substream_item"] = 0;
    p["substreams"] = 1;
    EXPECT_EQ(error_of(p).rfind("first_substream: 8 with no substream_item", 0), 0u)
        << error_of(p);
    p = spead_test::source_options();
    p["first_substream"] = 8;
    EXPECT_EQ(error_of(p).rfind("first_substream: 8 needs output_mode continuous", 0), 0u)
        << error_of(p);
}

TEST(SourceParams, ContinuousModeParametersAreEachNamedWhenBad)
{
    const auto starts = [](const std::string& message, const std::string& prefix) {
        return message.rfind(prefix, 0) == 0;
    };
    spead_test::source_options p = continuous_params();
    p["output_mode"] = "series";
    EXPECT_TRUE(starts(error_of(p), "output_mode: 'series' is not a mode"))
        << error_of(p);
    p = continuous_params();
    p["timestamp_item"] = 0;
    EXPECT_TRUE(
        starts(error_of(p), "timestamp_item: 0 names no item; a continuous stream"))
        << error_of(p);
    p = continuous_params();
    p["substreams"] = 2;
    EXPECT_TRUE(starts(error_of(p), "substream_item: 0 with 2 substreams"))
        << error_of(p);
    p["substream_item"] = 0x1600;
    EXPECT_TRUE(starts(error_of(p), "substream_item: 0x1600 is the timestamp item"))
        << error_of(p);
    p = continuous_params();
    p["window_heaps"] = 0;
    EXPECT_TRUE(starts(error_of(p), "window_heaps: 0 is out of range")) << error_of(p);
    p = continuous_params();
    p["payload_item"] = 0x1000;
    EXPECT_TRUE(starts(error_of(p), "payload_item: 0x1000 is not used in continuous"))
        << error_of(p);
    p = spead_test::source_options();
    p["substreams"] = 2;
    EXPECT_TRUE(starts(error_of(p), "substreams: 2 outputs need output_mode continuous"))
        << error_of(p);
    p = continuous_params();
    p["threads"] = 0;
    EXPECT_TRUE(starts(error_of(p), "threads: 0 is out of range")) << error_of(p);
}

TEST(SourceParams, ThreadsShareTheEndpointsUdpByPort)
{
    spead_test::source_options p = continuous_params();
    p["endpoints"] = "239.1.2.3+3:7148,:7149";
    p["threads"] = 2;
    const source_plan plan = spead_test::plan_of(p);
    ASSERT_EQ(plan.udp_readers.size(), 2u);
    EXPECT_EQ(plan.udp_readers[0].get_endpoints().size(), 4u); // the groups on 7148
    ASSERT_EQ(plan.udp_readers[1].get_endpoints().size(), 1u);
    EXPECT_EQ(plan.udp_readers[1].get_endpoints()[0].port(), 7149);
    p["threads"] = 3;
    EXPECT_NE(
        error_of(p).find("threads: 3 receiver threads but only 2 distinct UDP port"),
        std::string::npos)
        << error_of(p);
    p["threads"] = 1;
    EXPECT_EQ(spead_test::plan_of(p).udp_readers.size(), 1u);
}

TEST(SourceParams, TcpListensOnOneAddressWithItsConnectionLimits)
{
    spead_test::source_options p;
    p["transport"] = "tcp";
    p["endpoints"] = "127.0.0.1:7150";
    p["max_connections"] = 4;
    p["allowed_peers"] = "127.0.0.0/8";
    p["keep_listening"] = true;
    p["max_packet_size"] = 65536;
    const source_plan plan = spead_test::plan_of(p);
    EXPECT_EQ(plan.transport.kind, transport_kind::tcp);
    EXPECT_EQ(plan.tcp.get_endpoint().port(), 7150);
    EXPECT_EQ(plan.tcp.get_max_connections(), 4u);
    EXPECT_EQ(plan.tcp.get_allowed_peers(), "127.0.0.0/8");
    EXPECT_TRUE(plan.tcp.get_keep_listening());
    EXPECT_EQ(plan.tcp.get_max_packet_size(), 65536u);
    // buffer_size 0: the reader's default, as udp's 0 is udp's
    EXPECT_EQ(plan.tcp.get_buffer_size(), recv::tcp_config::default_buffer_size);
}

TEST(SourceParams, TcpBadValuesAreEachNamed)
{
    using bad = spead_test::bad_value<spead_test::source_options>;
    spead_test::source_options tcp;
    tcp["transport"] = "tcp";
    spead_test::expect_each_named(
        tcp,
        { bad{ [](spead_test::source_options& p) { p["endpoints"] = "not an endpoint"; },
               "endpoints" },
          bad{ [](spead_test::source_options& p) { p["endpoints"] = ""; }, "endpoints" },
          bad{ [](spead_test::source_options& p) { p["max_connections"] = 0; },
               "max_connections" },
          bad{ [](spead_test::source_options& p) { p["allowed_peers"] = "10.0.0.0/40"; },
               "allowed_peers" },
          bad{ [](spead_test::source_options& p) { p["threads"] = 2; }, "threads" },
          bad{ [](spead_test::source_options& p) { p["interface"] = "lo"; },
               "interface" } });
}
