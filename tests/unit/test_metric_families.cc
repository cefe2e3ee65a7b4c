/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Streams' counters as Prometheus metrics: names by Prometheus's conventions with
// docs/statistics.md's names as the stem, one series per stream told apart by its
// labels, and the gauges derived from the counters.

#include "metrics/metric_families.h"
#include "metrics/metric_names.h"
#include <gnuradio/spead/stats.h>
#include <gtest/gtest.h>
#include <set>
#include <string>

namespace {

using namespace gr::spead;
using namespace gr::spead::metrics;

stream_sample receiver(const std::string& name, std::uint64_t heaps)
{
    stream_sample s;
    s.way = direction::receive;
    s.labels = { { "stream", name },
                 { "transport", "udp" },
                 { "endpoint", "127.0.0.1:7148" } };
    s.counters = { { "heaps", heaps }, { "max_batch", 7 } };
    return s;
}

TEST(MetricNames, CountersEndInTotalWithTheStatisticsNameAsTheStem)
{
    EXPECT_EQ(metric_name_of(direction::receive, "heaps").name, "spead_recv_heaps_total");
    EXPECT_EQ(metric_name_of(direction::receive, "incomplete_heaps_evicted").name,
              "spead_recv_incomplete_heaps_evicted_total");
    EXPECT_EQ(metric_name_of(direction::send, "heaps").name, "spead_send_heaps_total");
    EXPECT_EQ(metric_name_of(direction::send, "bytes").name, "spead_send_bytes_total");
    EXPECT_EQ(metric_name_of(direction::receive, "heaps_output").name,
              "spead_recv_heaps_output_total");
    EXPECT_EQ(metric_name_of(direction::send, "data_heaps").type, metric_type::counter);
}

TEST(MetricNames, ValuesThatAreSetNotAccumulatedAreGauges)
{
    const auto batch = metric_name_of(direction::receive, "max_batch");
    EXPECT_EQ(batch.name, "spead_recv_max_batch_packets");
    EXPECT_EQ(batch.type, metric_type::gauge);
    EXPECT_EQ(metric_name_of(direction::receive, "ibv_multi_packet_queues").type,
              metric_type::gauge);
}

TEST(MetricNames, MicrosecondsBecomeSeconds)
{
    const auto wait = metric_name_of(direction::send, "send_wait_us");
    EXPECT_EQ(wait.name, "spead_send_send_wait_seconds_total");
    EXPECT_DOUBLE_EQ(wait.scale, 1e-6);
}

TEST(MetricNames, EveryCounterHasAValidUniqueName)
{
    std::set<std::string> seen;
    for (std::size_t i = 0; i < recv_stats::size; i++) {
        const std::string name =
            metric_name_of(direction::receive, stat_name(static_cast<recv_stat>(i))).name;
        EXPECT_TRUE(seen.insert(name).second) << name;
        EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789"),
                  std::string::npos)
            << name;
    }
    for (std::size_t i = 0; i < send_stats::size; i++) {
        const std::string name =
            metric_name_of(direction::send, stat_name(static_cast<send_stat>(i))).name;
        EXPECT_TRUE(seen.insert(name).second) << name;
    }
}

TEST(MetricNames, HelpIsTheCountersMeaning)
{
    EXPECT_EQ(metric_help(direction::receive, "heaps"),
              std::string("heaps: ") + stat_description(recv_stat::heaps));
    EXPECT_NE(metric_help(direction::send, "data_heaps").find("docs/statistics.md"),
              std::string::npos);
}

TEST(MetricFamilies, EachStreamIsASeriesWithItsLabels)
{
    const std::string text =
        exposition_text({ receiver("spead_source0", 12), receiver("spead_source1", 34) });
    EXPECT_NE(text.find("# TYPE spead_recv_heaps_total counter"), std::string::npos)
        << text;
    EXPECT_NE(
        text.find("spead_recv_heaps_total{stream=\"spead_source0\",transport=\"udp\","
                  "endpoint=\"127.0.0.1:7148\"} 12"),
        std::string::npos)
        << text;
    EXPECT_NE(
        text.find("spead_recv_heaps_total{stream=\"spead_source1\",transport=\"udp\","
                  "endpoint=\"127.0.0.1:7148\"} 34"),
        std::string::npos)
        << text;
    EXPECT_NE(text.find("# TYPE spead_recv_max_batch_packets gauge"), std::string::npos);
    // one family per name, however many streams
    EXPECT_EQ(text.find("# TYPE spead_recv_heaps_total",
                        text.find("# TYPE spead_recv_heaps_total") + 1),
              std::string::npos);
}

TEST(MetricFamilies, TheQueueFillIsAGauge)
{
    stream_sample s = receiver("rx", 1);
    s.queued_heaps = 5;
    const std::string text = exposition_text({ s });
    EXPECT_NE(text.find("# TYPE spead_recv_queue_heaps gauge"), std::string::npos)
        << text;
    EXPECT_NE(text.find("spead_recv_queue_heaps{stream=\"rx\""), std::string::npos);
    EXPECT_EQ(exposition_text({ receiver("rx", 1) }).find("queue_heaps"),
              std::string::npos);
}

TEST(MetricFamilies, OpenConnectionsAreAcceptedLessThoseThatEnded)
{
    stream_sample s = receiver("rx", 1);
    s.counters = { { "connections_accepted", 5 },
                   { "connections_closed", 1 },
                   { "connections_lost", 1 },
                   { "connections_idle_timeout", 1 } };
    EXPECT_NE(
        exposition_text({ s }).find("spead_recv_connections_open{stream=\"rx\","
                                    "transport=\"udp\",endpoint=\"127.0.0.1:7148\"} 2"),
        std::string::npos)
        << exposition_text({ s });

    stream_sample tx;
    tx.way = direction::send;
    tx.labels = { { "stream", "tx" }, { "substream", "1" } };
    tx.counters = { { "connections_established", 3 }, { "connections_lost", 2 } };
    EXPECT_NE(exposition_text({ tx }).find(
                  "spead_send_connections_open{stream=\"tx\",substream=\"1\"} 1"),
              std::string::npos)
        << exposition_text({ tx });
    // a stream without connections has no such gauge
    EXPECT_EQ(exposition_text({ receiver("rx", 1) }).find("connections_open"),
              std::string::npos);
}

TEST(MetricFamilies, SendWaitIsServedInSeconds)
{
    stream_sample tx;
    tx.way = direction::send;
    tx.labels = { { "stream", "tx" } };
    tx.counters = { { "send_wait_us", 2500000 } };
    EXPECT_NE(exposition_text({ tx }).find(
                  "spead_send_send_wait_seconds_total{stream=\"tx\"} 2.5"),
              std::string::npos)
        << exposition_text({ tx });
}

} // namespace
