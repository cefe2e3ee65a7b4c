/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// plan_source: spead.source's parameters checked once, each error naming its parameter,
// and turned into the configs the block runs with. (The Python QA checks every bad
// parameter through the block; these pin what the plan holds.)

#include "mapping/source_params.h"
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace {

using namespace gr::spead;

gr::logger_ptr test_logger()
{
    static auto logger = std::make_shared<gr::logger>("test source_params");
    return logger;
}

/*! The message of the std::invalid_argument plan_source throws for \p p. */
std::string error_of(const source_params& p)
{
    try {
        plan_source(p, test_logger());
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(SourceParams, DefaultsPlanAUdpSourceOnPort7148)
{
    const source_plan plan = plan_source(source_params(), test_logger());
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

TEST(SourceParams, AConfigSettersErrorIsRenamedToTheBlockParameter)
{
    source_params p;
    p.max_packet_size = 10;
    const std::string what = error_of(p);
    EXPECT_EQ(what.rfind("max_packet_size: 10 bytes is out of range; use 64 to 65507", 0),
              0u)
        << what;
}

TEST(SourceParams, EachBadParameterIsNamed)
{
    const auto named = [](const std::string& what, const std::string& parameter) {
        return what.rfind(parameter + ":", 0) == 0;
    };
    source_params p;
    p.vlen = 0;
    EXPECT_TRUE(named(error_of(p), "vlen")) << error_of(p);
    p = source_params();
    p.transport = "tcp";
    EXPECT_TRUE(named(error_of(p), "transport")) << error_of(p);
    p = source_params();
    p.max_heap_size = 4;
    EXPECT_TRUE(named(error_of(p), "max_heap_size")) << error_of(p);
    p = source_params();
    p.timestamp_item = 0x1600;
    EXPECT_TRUE(named(error_of(p), "sample_rate")) << error_of(p);
    p = source_params();
    p.max_poll = 0; // checked on udp too, so errors do not depend on the machine
    EXPECT_TRUE(named(error_of(p), "max_poll")) << error_of(p);
    p = source_params();
    p.max_heaps = 0;
    EXPECT_TRUE(named(error_of(p), "max_heaps")) << error_of(p);
    p = source_params();
    p.transport = "pcap";
    p.endpoints = "";
    EXPECT_TRUE(named(error_of(p), "capture_file")) << error_of(p);
}

TEST(SourceParams, ACaptureReplaysOnePortAndGetsALongerQueue)
{
    source_params p;
    p.transport = "pcap";
    p.capture_file =
        std::string(GR_SPEAD_VECTORS_DIR) + "/spead64-40_small_desc_stop.pcap";
    p.endpoints = ":7148";
    const source_plan plan = plan_source(p, test_logger());
    EXPECT_EQ(plan.transport.kind, transport_kind::pcap);
    EXPECT_EQ(plan.capture_port, 7148);
    EXPECT_EQ(plan.stream.get_queue_heaps(), 64u); // 1 GiB of 16 MiB heaps
    p.endpoints = ":7148,:7149";
    EXPECT_EQ(error_of(p).rfind("endpoints: a capture is replayed for one UDP port", 0),
              0u);
}

TEST(SourceParams, TheMappingGetsTheStreamParameters)
{
    source_params p;
    p.item_type = "sc16";
    p.vlen = 4;
    p.payload_item = 0x1001;
    p.timestamp_item = 0x1600;
    p.sample_rate = 1712e6;
    p.sync_time = 5;
    p.byte_order = "swap";
    p.len_tag_key = "";
    const source_plan plan = plan_source(p, test_logger());
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
