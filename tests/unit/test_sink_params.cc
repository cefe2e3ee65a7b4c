/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// plan_sink: spead.sink's parameters checked once, each error naming its parameter,
// and turned into the configs the block runs with.

#include "mapping/sink_params.h"
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace {

using namespace gr::spead;

gr::logger_ptr test_logger()
{
    static auto logger = std::make_shared<gr::logger>("test sink_params");
    return logger;
}

std::string error_of(const sink_params& p)
{
    try {
        plan_sink(p, test_logger());
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no error)";
}

bool names(const std::string& what, const std::string& parameter)
{
    return what.rfind(parameter + ":", 0) == 0;
}

TEST(SinkParams, DefaultsPlanAUdpSinkTo127001Port7148)
{
    const sink_plan plan = plan_sink(sink_params(), test_logger());
    EXPECT_EQ(plan.transport.kind, transport_kind::udp);
    ASSERT_EQ(plan.udp.get_endpoints().size(), 1u);
    EXPECT_EQ(plan.udp.get_endpoints()[0].port(), 7148);
    EXPECT_EQ(plan.udp.get_ttl(), 1);
    EXPECT_EQ(plan.stream.get_max_packet_size(), 1472u);
    EXPECT_EQ(plan.stream.get_max_heaps(), sink_send_slots);
    EXPECT_EQ(plan.stream.get_rate(), 0.0);
    EXPECT_EQ(plan.mapping.payload_item, 0x1000u);
    EXPECT_EQ(plan.mapping.flavour.heap_address_bits(), 40);
    EXPECT_EQ(plan.mapping.payload_name, "payload");
    EXPECT_TRUE(plan.send_stop_heap);
}

TEST(SinkParams, EachBadParameterIsNamed)
{
    sink_params p;
    p.ttl = 256; // the udp config's own check
    EXPECT_TRUE(names(error_of(p), "ttl")) << error_of(p);
    p = sink_params();
    p.flavour = "64-32";
    EXPECT_TRUE(names(error_of(p), "flavour")) << error_of(p);
    p = sink_params();
    p.payload_item = 0x10;
    EXPECT_TRUE(names(error_of(p), "payload_item")) << error_of(p);
    p = sink_params();
    p.len_tag_key = "";
    EXPECT_TRUE(names(error_of(p), "heap_items")) << error_of(p);
    p = sink_params();
    p.heap_cnt_step = 0;
    EXPECT_TRUE(names(error_of(p), "heap_cnt_step")) << error_of(p);
    p = sink_params();
    p.max_packet_size = 8; // the send stream config's own check
    EXPECT_TRUE(names(error_of(p), "max_packet_size")) << error_of(p);
    p = sink_params();
    p.rate_gbps = -1;
    EXPECT_TRUE(names(error_of(p), "rate_gbps")) << error_of(p);
    p = sink_params();
    p.transport = "ibverbs";
    EXPECT_TRUE(names(error_of(p), "interface")) << error_of(p);
    EXPECT_NE(error_of(p).find("sends through the RDMA device"), std::string::npos);
}

TEST(SinkParams, TheMappingGetsTheStreamParameters)
{
    sink_params p;
    p.flavour = "64-48";
    p.heap_cnt_start = 5;
    p.heap_cnt_step = 2;
    p.descriptor_interval = 10;
    p.byte_order = "swap";
    p.rate_gbps = 8;
    const sink_plan plan = plan_sink(p, test_logger());
    EXPECT_EQ(plan.mapping.flavour.heap_address_bits(), 48);
    EXPECT_EQ(plan.mapping.cnt_start, 5u);
    EXPECT_EQ(plan.mapping.cnt_step, 2u);
    EXPECT_EQ(plan.mapping.descriptor_interval, 10u);
    EXPECT_EQ(plan.mapping.byte_order, byte_order_mode::swap);
    EXPECT_EQ(plan.stream.get_rate(), 1e9);
}

} // namespace
