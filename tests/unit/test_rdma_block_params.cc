/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The blocks' transport="rdma": what the source and sink parameters become (listener
// and connections, the two paths' settings, 1 MiB messages by default), and bad input
// refused at make() naming the block's parameter.

#include "mapping/sink_plan.h"
#include "mapping/source_plan.h"
#include "plan_errors.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdexcept>

using namespace gr::spead;
using ::testing::HasSubstr;

namespace {
std::string refusal(const spead_test::source_options& p)
{
    try {
        spead_test::plan_of(p);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(accepted)";
}
} // namespace

TEST(RdmaBlockParams, SourceListensWithItsLimitsAndPaths)
{
    spead_test::source_options p;
    p["transport"] = "rdma";
    p["endpoints"] = "verbs://:7150";
    p["max_connections"] = 3;
    p["rdma_connections"] = 2;
    p["rdma_depth"] = 5;
    const source_plan plan = spead_test::plan_of(p);
    EXPECT_EQ(plan.transport.kind, transport_kind::rdma);
    EXPECT_EQ(plan.rdma.get_port(), 7150);
    EXPECT_EQ(plan.rdma.get_max_connections(), 3u);
    EXPECT_EQ(plan.rdma.get_rdma_connections(), 2u);
    EXPECT_EQ(plan.rdma.get_rdma_depth(), 5u);
    // The datagram default of max_packet_size (9200) becomes rdma's 1 MiB + 4 KiB.
    EXPECT_EQ(plan.rdma.get_max_packet_size(), (std::size_t(1) << 20) + 4096);
}

TEST(RdmaBlockParams, SourceRefusesBadInputNamingTheParameter)
{
    spead_test::source_options p;
    p["transport"] = "rdma";
    p["endpoints"] = "10.0.0.1:7150";
    EXPECT_THAT(refusal(p), HasSubstr("endpoints: "));
    p["endpoints"] = "verbs://:7150";
    p["rdma_depth"] = 0;
    EXPECT_THAT(refusal(p), HasSubstr("rdma_depth: 0 with rdma_connections 4"));
    p["rdma_connections"] = 0;
    EXPECT_EQ(refusal(p), "(accepted)");
}

TEST(RdmaBlockParams, SinkConnectsPerEndpointWithMessageSizedPackets)
{
    spead_test::sink_options p;
    p["transport"] = "rdma";
    p["endpoints"] = "verbs://127.0.0.1:7150,verbs://127.0.0.1:7151";
    p["inline_bytes"] = 128;
    p["reconnect"] = true;
    const sink_plan plan = spead_test::plan_of(p);
    ASSERT_EQ(plan.rdma.size(), 2u);
    EXPECT_EQ(plan.rdma[1].get_port(), 7151);
    EXPECT_EQ(plan.rdma[0].get_inline_bytes(), 128u);
    EXPECT_TRUE(plan.rdma[0].get_reconnect());
    EXPECT_EQ(plan.stream.get_max_packet_size(), (std::size_t(1) << 20) + 4096);
    p["endpoints"] = "verbs://:7150";
    try {
        spead_test::plan_of(p);
        ADD_FAILURE() << "a URI without a host was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("endpoints: \"verbs://:7150\" names no host"));
    }
}
