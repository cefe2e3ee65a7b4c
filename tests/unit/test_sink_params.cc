/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// plan_sink: spead.sink's parameters checked once, each error naming its parameter,
// and turned into the configs the block runs with.

#include "mapping/sink_plan.h"
#include "plan_errors.h"
#include <gnuradio/logger.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>

namespace {

using namespace gr::spead;

using spead_test::error_of;
using spead_test::names;
const auto test_logger = spead_test::plan_logger;

TEST(SinkParams, DefaultsPlanAUdpSinkTo127001Port7148)
{
    const sink_plan plan = spead_test::plan_of(spead_test::sink_options());
    EXPECT_EQ(plan.transport.kind, transport_kind::udp);
    ASSERT_EQ(plan.udp.get_endpoints().size(), 1u);
    EXPECT_EQ(plan.udp.get_endpoints()[0].port(), 7148);
    EXPECT_EQ(plan.udp.get_ttl(), 1);
    EXPECT_EQ(plan.stream.get_max_packet_size(), 1472u);
    EXPECT_EQ(plan.stream.get_max_heaps(), sink_send_slots);
    EXPECT_EQ(plan.stream.get_rate(), 0.0);
    EXPECT_EQ(plan.heaps.payload_item, 0x1000u);
    EXPECT_EQ(plan.heaps.flavour.heap_address_bits(), 40);
    EXPECT_EQ(plan.heaps.payload_name, "payload");
    EXPECT_TRUE(plan.send_stop_heap);
}

TEST(SinkParams, EachBadParameterIsNamed)
{
    using bad = spead_test::bad_value<spead_test::sink_options>;
    spead_test::expect_each_named(
        spead_test::sink_options(),
        { bad{ [](spead_test::sink_options& p) { p["ttl"] = 256; },
               "ttl" }, // the udp config's check
          bad{ [](spead_test::sink_options& p) { p["flavour"] = "64-32"; }, "flavour" },
          bad{ [](spead_test::sink_options& p) { p["payload_item"] = 0x10; },
               "payload_item" },
          bad{ [](spead_test::sink_options& p) { p["len_tag_key"] = ""; }, "heap_items" },
          bad{ [](spead_test::sink_options& p) { p["heap_cnt_step"] = 0; },
               "heap_cnt_step" },
          // the send stream config's own check
          bad{ [](spead_test::sink_options& p) { p["max_packet_size"] = 8; },
               "max_packet_size" },
          bad{ [](spead_test::sink_options& p) { p["rate_gbps"] = -1; }, "rate_gbps" },
          bad{ [](spead_test::sink_options& p) { p["transport"] = "ibverbs"; },
               "interface" } });
    spead_test::sink_options p;
    p["transport"] = "ibverbs";
    EXPECT_NE(error_of(p).find("sends through the RDMA device"), std::string::npos);
}

TEST(SinkParams, TheMappingGetsTheStreamParameters)
{
    spead_test::sink_options p;
    p["flavour"] = "64-48";
    p["heap_cnt_start"] = 5;
    p["heap_cnt_step"] = 2;
    p["descriptor_interval"] = 10;
    p["byte_order"] = "swap";
    p["rate_gbps"] = 8;
    const sink_plan plan = spead_test::plan_of(p);
    EXPECT_EQ(plan.heaps.flavour.heap_address_bits(), 48);
    EXPECT_EQ(plan.heaps.cnt_start, 5u);
    EXPECT_EQ(plan.heaps.cnt_step, 2u);
    EXPECT_EQ(plan.heaps.descriptor_interval, 10u);
    EXPECT_EQ(plan.heaps.byte_order, byte_order_mode::swap);
    EXPECT_EQ(plan.stream.get_rate(), 1e9);
}

} // namespace

namespace {

spead_test::sink_options continuous_params()
{
    spead_test::sink_options p;
    p["input_mode"] = "continuous";
    p["heap_items"] = 1024;
    return p;
}

TEST(SinkParams, ContinuousModePlansStreamToChunkFromTheParameters)
{
    spead_test::sink_options p = continuous_params();
    p["item_type"] = "complex_int16";
    p["substreams"] = 2;
    p["substream_item"] = 0x1601;
    p["start_timestamp"] = 7;
    p["sample_rate"] = 1e6;
    p["sync_time"] = 3.5;
    p["heap_cnt_start"] = 4;
    const sink_plan plan = spead_test::plan_of(p);
    EXPECT_TRUE(plan.continuous);
    const stream_to_chunk_config& c = plan.chunks;
    EXPECT_EQ(c.substreams, 2u);
    EXPECT_EQ(c.heap_items, 1024u);
    EXPECT_EQ(c.item_bytes, 4u);
    EXPECT_EQ(c.timestamp_item, 0x1600u);
    EXPECT_EQ(c.timestamp_step, 1024u); // 0 = heap_items
    EXPECT_EQ(c.start_timestamp, 7u);
    EXPECT_EQ(c.sample_rate, 1e6);
    EXPECT_EQ(c.sync_time, 3.5);
    EXPECT_EQ(c.substream_item, 0x1601u);
    EXPECT_EQ(c.cnt_start, 4u);
    // Heaps are cut by count (the length tag means nothing here).
    EXPECT_EQ(make_sink_mapping(plan, test_logger())->fixed_heap_items(), 1024u);
}

TEST(SinkParams, HeapsModeIsTheDefault)
{
    EXPECT_EQ(sink_config().get_input_mode(), "heaps");
    const sink_plan plan = spead_test::plan_of(spead_test::sink_options());
    EXPECT_FALSE(plan.continuous);
    EXPECT_EQ(make_sink_mapping(plan, test_logger())->fixed_heap_items(), 0u);
}

TEST(SinkParams, TaggedIsStillAcceptedForHeapsWithAWarningNamingHeaps)
{
    auto captured = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
    gr::logging::singleton().add_default_sink(captured);
    spead_test::sink_options p;
    p["input_mode"] = "tagged";
    const sink_plan plan =
        plan_sink(p.config(), std::make_shared<gr::logger>("tagged alias"));
    EXPECT_FALSE(plan.continuous);
    const auto lines = captured->last_formatted();
    std::size_t warnings = 0;
    for (const auto& line : lines)
        if (line.find("'tagged'") != std::string::npos) {
            warnings++;
            EXPECT_NE(line.find("use heaps"), std::string::npos) << line;
        }
    EXPECT_EQ(warnings, 1u);
    p["input_mode"] = "heaps";
    plan_sink(p.config(), std::make_shared<gr::logger>("heaps"));
    EXPECT_EQ(captured->last_formatted().size(), lines.size()); // no warning
}

TEST(SinkParams, AnUnknownInputModeIsNamed)
{
    spead_test::sink_options p;
    p["input_mode"] = "timed";
    EXPECT_TRUE(names(error_of(p), "input_mode")) << error_of(p);
}

TEST(SinkParams, ContinuousModeNeedsHeapItems)
{
    spead_test::sink_options p = continuous_params();
    p["heap_items"] = 0;
    EXPECT_TRUE(names(error_of(p), "heap_items")) << error_of(p);
    EXPECT_NE(error_of(p).find("continuous"), std::string::npos);
}

TEST(SinkParams, ContinuousModeNeedsAValidTimestampItem)
{
    spead_test::sink_options p = continuous_params();
    p["timestamp_item"] = 0;
    EXPECT_TRUE(names(error_of(p), "timestamp_item")) << error_of(p);
    p["timestamp_item"] = 0x05; // reserved (descriptor)
    EXPECT_TRUE(names(error_of(p), "timestamp_item")) << error_of(p);
    p["timestamp_item"] = std::uint64_t(1) << 23; // beyond 64-40's ids
    EXPECT_TRUE(names(error_of(p), "timestamp_item")) << error_of(p);
    p["timestamp_item"] = 0x1000; // the payload's
    EXPECT_TRUE(names(error_of(p), "timestamp_item")) << error_of(p);
}

TEST(SinkParams, SeveralSubstreamsNeedADistinctSubstreamItem)
{
    spead_test::sink_options p = continuous_params();
    p["substreams"] = 2;
    EXPECT_TRUE(names(error_of(p), "substream_item")) << error_of(p);
    p["substream_item"] = 0x1600; // the timestamp's
    EXPECT_TRUE(names(error_of(p), "substream_item")) << error_of(p);
    p["substream_item"] = 0x1000; // the payload's
    EXPECT_TRUE(names(error_of(p), "substream_item")) << error_of(p);
    p["substream_item"] = 0x02; // reserved
    EXPECT_TRUE(names(error_of(p), "substream_item")) << error_of(p);
    p["substream_item"] = 0x1601;
    EXPECT_EQ(error_of(p), "(no error)");
}

TEST(SinkParams, SubstreamsAreOneToTheLimitAndOnlyContinuous)
{
    spead_test::sink_options p = continuous_params();
    p["substream_item"] = 0x1601;
    p["substreams"] = 0;
    EXPECT_TRUE(names(error_of(p), "substreams")) << error_of(p);
    p["substreams"] = sink_max_substreams + 1;
    EXPECT_TRUE(names(error_of(p), "substreams")) << error_of(p);
    p = spead_test::sink_options();
    p["substreams"] = 2;
    EXPECT_TRUE(names(error_of(p), "substreams")) << error_of(p);
}

TEST(SinkParams, TimestampsMustFitTheFlavour)
{
    spead_test::sink_options p = continuous_params();
    p["start_timestamp"] = std::uint64_t(1) << 40;
    EXPECT_TRUE(names(error_of(p), "start_timestamp")) << error_of(p);
    EXPECT_NE(error_of(p).find("or flavour 64-48"), std::string::npos) << error_of(p);
    p["flavour"] = "64-48";
    EXPECT_EQ(error_of(p), "(no error)");
    // Already the wide flavour: the advice is not to switch to it.
    p["start_timestamp"] = std::uint64_t(1) << 48;
    EXPECT_TRUE(names(error_of(p), "start_timestamp")) << error_of(p);
    EXPECT_EQ(error_of(p).find("flavour 64-48"), std::string::npos) << error_of(p);
    p = continuous_params();
    p["timestamp_step"] = std::uint64_t(1) << 40;
    EXPECT_TRUE(names(error_of(p), "timestamp_step")) << error_of(p);
}

TEST(SinkParams, SampleRateAndSyncTimeMustBeNumbers)
{
    spead_test::sink_options p = continuous_params();
    p["sample_rate"] = -1;
    EXPECT_TRUE(names(error_of(p), "sample_rate")) << error_of(p);
    p["sample_rate"] = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(names(error_of(p), "sample_rate")) << error_of(p);
    p = continuous_params();
    p["sync_time"] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(names(error_of(p), "sync_time")) << error_of(p);
}

} // namespace

TEST(SinkParams, TcpConnectsToOneReceiver)
{
    spead_test::sink_options p;
    p["transport"] = "tcp";
    p["endpoints"] = "127.0.0.1:7150";
    p["reconnect"] = true;
    p["connect_timeout"] = 0.25;
    const sink_plan plan = spead_test::plan_of(p);
    EXPECT_EQ(plan.transport.kind, transport_kind::tcp);
    ASSERT_EQ(plan.tcp.size(), 1u);
    EXPECT_EQ(plan.tcp[0].get_endpoint().port(), 7150);
    EXPECT_TRUE(plan.tcp[0].get_reconnect());
    EXPECT_EQ(plan.tcp[0].get_connect_timeout(), std::chrono::milliseconds(250));
    EXPECT_EQ(plan.tcp[0].get_buffer_size(), send::tcp_config::default_buffer_size);
    // several endpoints: a connection each, one substream each
    p["endpoints"] = "127.0.0.1:7150,127.0.0.1:7150";
    EXPECT_EQ(spead_test::plan_of(p).tcp.size(), 2u);
}

TEST(SinkParams, TcpBadValuesAreEachNamed)
{
    using bad = spead_test::bad_value<spead_test::sink_options>;
    spead_test::sink_options tcp;
    tcp["transport"] = "tcp";
    spead_test::expect_each_named(
        tcp,
        { bad{ [](spead_test::sink_options& p) { p["endpoints"] = "127.0.0.1:0"; },
               "endpoints" },
          bad{ [](spead_test::sink_options& p) { p["endpoints"] = "nowhere"; },
               "endpoints" },
          bad{ [](spead_test::sink_options& p) { p["connect_timeout"] = 0; },
               "connect_timeout" },
          bad{ [](spead_test::sink_options& p) { p["connect_timeout"] = -1; },
               "connect_timeout" } });
}
