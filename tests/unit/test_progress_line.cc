/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The tools' --progress line: what changed since the previous line, and which
// counters are drops and which are losses.

#include "error_message.h"
#include "metrics/progress_line.h"
#include <gtest/gtest.h>
#include <sstream>
#include <thread>

namespace {

using namespace gr::spead;
using namespace gr::spead::metrics;
using namespace std::chrono_literals;
using spead_test::error_message;

/*! Counters with the given values, the others zero. */
template <typename Stat>
counter_set<Stat> counters(std::initializer_list<std::pair<Stat, std::uint64_t>> values)
{
    counter_set<Stat> set;
    for (const auto& [stat, value] : values)
        set[stat] = value;
    return set;
}

TEST(ProgressLine, CountsWhatChangedSinceThePreviousLine)
{
    const auto t0 = progress_line::clock::now();
    progress_line line("spead_recv", { 10, 1000, 1, 2 }, t0);
    EXPECT_EQ(line.next({ 110, 1000 + 125000000, 4, 2 }, t0 + 1s),
              "spead_recv: 1.00 s: 100 heaps, 1.000 Gb/s, 3 dropped, 0 lost");
    EXPECT_EQ(line.next({ 110, 1000 + 125000000, 4, 7 }, t0 + 3s),
              "spead_recv: 2.00 s: 0 heaps, 0.000 Gb/s, 0 dropped, 5 lost");
}

TEST(ProgressLine, ATotalThatWentBackCountsFromZero)
{
    const auto t0 = progress_line::clock::now();
    progress_line line("spead_send", { 100, 100, 0, 0 }, t0);
    EXPECT_EQ(line.next({ 5, 0, 0, 0 }, t0 + 1s),
              "spead_send: 1.00 s: 5 heaps, 0.000 Gb/s, 0 dropped, 0 lost");
}

TEST(ProgressLine, ReceiveDropsAreWhatWasDiscardedForWantOfRoom)
{
    const recv_stats s = counters<recv_stat>({
        { recv_stat::packets_dropped_socket_overflow, 1 },
        { recv_stat::runs_dropped_socket_overflow, 2 },
        { recv_stat::frames_dropped_no_buffer, 4 },
        { recv_stat::heaps_dropped_queue_full, 8 },
        { recv_stat::packets_dropped_queue_full, 16 },
        { recv_stat::packets_duplicate, 100 }, // not for want of room
    });
    EXPECT_EQ(receive_dropped(s), 31u);
}

TEST(ProgressLine, ReceiveLossesAreHeapsThatDidNotArriveWhole)
{
    EXPECT_EQ(
        receive_lost(counters<recv_stat>({ { recv_stat::incomplete_heaps_evicted, 3 },
                                           { recv_stat::incomplete_heaps_flushed, 1 } })),
        4u);
    const recv_stats continuous = counters<recv_stat>({
        { recv_stat::positions_released, 10 },
        { recv_stat::incomplete_heaps_evicted, 3 }, // among the two below
        { recv_stat::heaps_missing, 5 },
        { recv_stat::incomplete_heaps_delivered, 1 },
    });
    EXPECT_EQ(receive_lost(continuous), 6u);
}

TEST(ProgressLine, SendTotalsAreHeapsBytesRefusedAndFailed)
{
    const send_stats s =
        counters<send_stat>({ { send_stat::heaps, 9 },
                              { send_stat::bytes, 900 },
                              { send_stat::heaps_rejected_queue_full, 2 },
                              { send_stat::heaps_failed, 1 } });
    const progress_totals t = send_progress(s);
    EXPECT_EQ(t.heaps, 9u);
    EXPECT_EQ(t.bytes, 900u);
    EXPECT_EQ(t.dropped, 2u);
    EXPECT_EQ(t.lost, 1u);
}

/*! What a spead_recv progress_reporter of \p interval (s) writes while its heap
 * total is \p heaps, from just after it starts, for \p running. */
std::string
report_heaps(double interval, std::uint64_t heaps, std::chrono::milliseconds running)
{
    std::ostringstream out;
    std::atomic<std::uint64_t> total{ 0 };
    {
        progress_reporter reporter(
            "spead_recv",
            interval,
            [&] {
                return progress_totals{ total.load(), 0, 0, 0 };
            },
            out);
        total = heaps;
        std::this_thread::sleep_for(running);
    }
    return out.str();
}

TEST(ProgressReporter, WritesALinePerInterval)
{
    const std::string text = report_heaps(0.05, 7, 180ms);
    EXPECT_EQ(text.rfind("spead_recv: 0.", 0), 0u) << text;
    EXPECT_NE(text.find("7 heaps"), std::string::npos) << text;
    const auto lines = std::count(text.begin(), text.end(), '\n');
    EXPECT_GE(lines, 2) << text;
    EXPECT_LE(lines, 5) << text;
}

TEST(ProgressReporter, TheLinesAddUpToTheTotalsEvenWhenItStopsAtOnce)
{
    // It stops long before the first interval is over.
    const std::string text = report_heaps(10.0, 3, 0ms);
    EXPECT_NE(text.find(": 3 heaps,"), std::string::npos) << text;
    EXPECT_EQ(report_heaps(10.0, 0, 0ms), ""); // nothing happened in a sliver of one
}

TEST(ProgressReporter, AnIntervalThatIsNotPositiveNamesTheFlag)
{
    std::ostringstream out;
    const std::string message = error_message<std::invalid_argument>([&] {
        progress_reporter(
            "spead_send", 0, [] { return progress_totals{}; }, out);
    });
    EXPECT_EQ(message.rfind("--progress: ", 0), 0u) << message;
}

} // namespace
