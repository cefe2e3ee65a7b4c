/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What spead.source and spead.sink serve to Prometheus: the counters their transport
// counts, labelled by alias, transport and endpoint, a sink's connected links apart
// with their substream, and the block served only once started.

#include "http_get.h"
#include "mapping/block_metrics.h"
#include "plan_errors.h"
#include "protocol/packet_writer.h"
#include <gtest/gtest.h>
#include <algorithm>

namespace {

using namespace gr::spead;

using labels = std::vector<std::pair<std::string, std::string>>;

bool has(const metrics::stream_sample& s, const std::string& counter)
{
    return std::any_of(s.counters.begin(), s.counters.end(), [&](const auto& kv) {
        return kv.first == counter;
    });
}

/*! A transport that takes every packet. */
class null_writer : public send::packet_writer
{
public:
    std::size_t
    write_packets(const send::packet*, std::size_t n, boost::system::error_code&) override
    {
        return n;
    }
};

std::unique_ptr<send::stream> null_stream(send_slots& slots)
{
    return std::make_unique<send::stream>(
        slots.io(), send::stream_config(), 1, std::make_unique<null_writer>());
}

TEST(BlockMetrics, ASourceIsLabelledWithItsAliasTransportAndEndpoints)
{
    spead_test::source_options p;
    p["endpoints"] = "127.0.0.1:7148,127.0.0.1:7149";
    const source_plan plan = spead_test::plan_of(p);
    const auto s = source_sample("rx", plan, { { "heaps", 5 } }, 3);
    EXPECT_EQ(s.way, metrics::direction::receive);
    EXPECT_EQ(s.labels,
              (labels{ { "stream", "rx" },
                       { "transport", "udp" },
                       { "endpoint", "127.0.0.1:7148,127.0.0.1:7149" } }));
    EXPECT_EQ(s.counters,
              (std::vector<std::pair<std::string, std::uint64_t>>{ { "heaps", 5 } }));
    EXPECT_EQ(s.queued_heaps, 3u);
}

TEST(BlockMetrics, ASourceServesTheCountersItsTransportCountsZerosIncluded)
{
    const source_plan plan = spead_test::plan_of(spead_test::source_options());
    const auto s = source_sample("rx",
                                 plan,
                                 { { "packets_dropped_socket_overflow", 0 },
                                   { "frames_dropped_no_buffer", 0 },
                                   { "heaps_missing", 0 } },
                                 std::nullopt);
    EXPECT_TRUE(has(s, "packets_dropped_socket_overflow"));
    EXPECT_FALSE(has(s, "frames_dropped_no_buffer")); // ibverbs'
    EXPECT_FALSE(has(s, "heaps_missing"));            // continuous mode's
    EXPECT_FALSE(s.queued_heaps);                     // no stream open
}

TEST(BlockMetrics, AUdpSinkIsOneSeriesOfItsStreamAndItsOwnCounters)
{
    spead_test::sink_options p;
    p["endpoints"] = "127.0.0.1:7148";
    const sink_plan plan = spead_test::plan_of(p);
    send_slots slots(4, nullptr);
    slots.open(null_stream(slots));
    const auto samples = sink_samples("tx", plan, slots, { { "data_heaps", 2 } });
    ASSERT_EQ(samples.size(), 1u);
    EXPECT_EQ(samples[0].way, metrics::direction::send);
    EXPECT_EQ(samples[0].labels,
              (labels{ { "stream", "tx" },
                       { "transport", "udp" },
                       { "endpoint", "127.0.0.1:7148" } }));
    EXPECT_TRUE(has(samples[0], "data_heaps"));
    EXPECT_TRUE(has(samples[0], "heaps"));
    EXPECT_FALSE(has(samples[0], "connections_lost")); // connected links'
    EXPECT_EQ(samples[0].queued_heaps, 0u);
}

TEST(BlockMetrics, ASinksConnectedLinksAreASeriesEachWithTheirSubstream)
{
    spead_test::sink_options p;
    p["transport"] = "tcp";
    p["endpoints"] = "127.0.0.1:7148,127.0.0.1:7149";
    const sink_plan plan = spead_test::plan_of(p);
    send_slots slots(4, nullptr);
    std::vector<std::unique_ptr<send::stream>> links;
    links.push_back(null_stream(slots));
    links.push_back(null_stream(slots));
    slots.open(std::move(links));
    const auto samples = sink_samples("tx", plan, slots, { { "data_heaps", 2 } });
    ASSERT_EQ(samples.size(), 3u);
    EXPECT_EQ(samples[0].labels,
              (labels{ { "stream", "tx" },
                       { "transport", "tcp" },
                       { "endpoint", "127.0.0.1:7148,127.0.0.1:7149" } }));
    EXPECT_TRUE(has(samples[0], "data_heaps"));
    EXPECT_FALSE(has(samples[0], "heaps")); // the links' own
    for (std::size_t i = 1; i < 3; i++) {
        EXPECT_EQ(samples[i].labels,
                  (labels{ { "stream", "tx" },
                           { "transport", "tcp" },
                           { "endpoint", "127.0.0.1:714" + std::to_string(7 + i) },
                           { "substream", std::to_string(i - 1) } }));
        EXPECT_TRUE(has(samples[i], "connections_lost"));
        EXPECT_FALSE(has(samples[i], "data_heaps"));
    }
}

TEST(BlockWatch, ABlockIsServedOnlyOnceStarted)
{
    block_watch watch;
    watch.expose("127.0.0.1:0", [] {
        metrics::stream_sample s;
        s.labels = { { "stream", "rx" } };
        s.counters = { { "heaps", 4 } };
        return std::vector<metrics::stream_sample>{ s };
    });
    ASSERT_NE(watch.port(), 0); // listening from the start: a port in use fails early
    EXPECT_EQ(spead_test::http_get(watch.port()).find("spead_recv_heaps_total"),
              std::string::npos);
    watch.start();
    EXPECT_NE(spead_test::http_get(watch.port())
                  .find("spead_recv_heaps_total{stream=\"rx\"} 4"),
              std::string::npos);
    const std::uint16_t port = watch.port();
    watch.expose("127.0.0.1:0", [] { return std::vector<metrics::stream_sample>(); });
    EXPECT_EQ(watch.port(), port); // the first registration is kept
}

} // namespace
