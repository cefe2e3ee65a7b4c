/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_bench's rate search (apps/rate_search.cc) against scripted trials: what it
// finds, prints and writes as CSV rows, with no network.

#include "rate_search.h"
#include <gtest/gtest.h>
#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

namespace bench = gr::spead::apps::bench;

namespace {

/*! A receiver that loses heaps above \p limit, fed by a sender that reaches at most
 * \p sender_max Gb/s. */
bench::trial_result scripted(double rate, double limit, double sender_max)
{
    bench::trial_result r;
    r.target_gbps = rate;
    r.achieved_gbps = std::min(rate, sender_max);
    r.heaps_sent = 100;
    r.heaps_received = r.achieved_gbps > limit ? 90 : 100;
    r.packets_sent = r.packets_received = 1000;
    return r;
}

struct searched {
    bench::search_result result;
    std::string printed;
    std::map<std::string, std::string> median_rows; //!< metric -> value
    std::string median_offered;
};

searched search(double limit, double sender_max, std::vector<double> rates, int refine)
{
    char path[] = "/tmp/test_rate_search_XXXXXX";
    const int fd = mkstemp(path);
    close(fd);
    searched out;
    {
        bench::csv_writer csv(path);
        bench::search_options options;
        options.rates = rates;
        options.runs = 2;
        options.refine = refine;
        std::ostringstream printed;
        auto* old = std::cout.rdbuf(printed.rdbuf());
        out.result = bench::search_lossless_rate(
            [&](double rate) { return scripted(rate, limit, sender_max); },
            options,
            "recv packet 1472",
            { csv, "recv", 1472 });
        std::cout.rdbuf(old);
        out.printed = printed.str();
    }
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        // bench,impl,packet_bytes,offered_gbps,trial,metric,value
        std::vector<std::string> f;
        std::istringstream fields(line);
        for (std::string x; std::getline(fields, x, ',');)
            f.push_back(x);
        if (f.size() == 7 && f[4] == "median") {
            out.median_rows[f[5]] = f[6];
            out.median_offered = f[3];
        }
    }
    std::remove(path);
    return out;
}

} // namespace

TEST(rate_search, a_receiver_losing_heaps_is_bounded_by_bisection)
{
    const auto s = search(5.0, 100.0, { 2, 4, 6, 8 }, 1);
    EXPECT_DOUBLE_EQ(s.result.lossless_gbps, 5.0); // 4 passes, 6 loses, 5 passes
    EXPECT_FALSE(s.result.sender_limited);
    EXPECT_DOUBLE_EQ(s.result.loss_gbps, 6.0);
    EXPECT_NE(s.printed.find("recv packet 1472: highest lossless rate 5 Gb/s"),
              std::string::npos)
        << s.printed;
    EXPECT_EQ(s.median_rows.at("lossless_gbps"), "5");
    EXPECT_EQ(s.median_rows.at("sender_limited"), "0");
}

TEST(rate_search, a_sender_short_of_the_first_rate_gives_a_lower_bound_not_zero)
{
    // The regenerate run on a slow machine: asked 2 Gb/s, the sender reached 1.89.
    const auto s = search(100.0, 1.89, { 2, 4 }, 2);
    EXPECT_DOUBLE_EQ(s.result.lossless_gbps, 1.89);
    EXPECT_TRUE(s.result.sender_limited);
    EXPECT_EQ(bench::describe(s.result), ">= 1.89 Gb/s (sender-limited)");
    EXPECT_NE(
        s.printed.find("recv packet 1472: lossless at >= 1.89 Gb/s, sender-limited"),
        std::string::npos)
        << s.printed;
    EXPECT_EQ(s.printed.find("highest lossless rate 0"), std::string::npos) << s.printed;
    EXPECT_EQ(s.median_rows.at("lossless_gbps"), "1.89");
    EXPECT_EQ(s.median_rows.at("sender_limited"), "1");
    EXPECT_EQ(s.median_rows.at("gbps"), "1.89"); // the runs the figure comes from
    EXPECT_EQ(s.median_offered, "2");
    EXPECT_EQ(bench::figure_lines("recv", 1472, s.result),
              "recv_lossless_gbps_1472: 1.89\nrecv_lossless_sender_limited_1472: 1\n");
}

TEST(rate_search, a_sender_short_above_a_passing_rate_keeps_the_higher_figure)
{
    // 2 and 4 pass; at 6 the sender reaches 5.5 without loss: lossless at >= 5.5.
    const auto s = search(100.0, 5.5, { 2, 4, 6, 8 }, 2);
    EXPECT_DOUBLE_EQ(s.result.lossless_gbps, 5.5);
    EXPECT_TRUE(s.result.sender_limited);
    EXPECT_EQ(s.median_offered, "6");
}

TEST(rate_search, a_sender_far_short_above_a_passing_rate_keeps_that_rate)
{
    // 2 passes; at 4 the sender reaches only 1.5 (a stall): the figure stays 2, a bound.
    const auto stalled = [](double rate) {
        auto r = scripted(rate, 100.0, 100.0);
        if (rate > 3)
            r.achieved_gbps = 1.5;
        return r;
    };
    bench::csv_writer no_csv;
    bench::search_options options;
    options.rates = { 2, 4 };
    options.runs = 1;
    std::ostringstream printed;
    auto* old = std::cout.rdbuf(printed.rdbuf());
    const auto r = bench::search_lossless_rate(stalled, options, "x", { no_csv, "x", 1 });
    std::cout.rdbuf(old);
    EXPECT_DOUBLE_EQ(r.lossless_gbps, 2.0);
    EXPECT_TRUE(r.sender_limited);
}

TEST(rate_search, loss_at_every_rate_says_so_instead_of_a_zero_rate)
{
    const auto s = search(1.0, 100.0, { 2, 4 }, 0);
    EXPECT_DOUBLE_EQ(s.result.lossless_gbps, 0.0);
    EXPECT_FALSE(s.result.sender_limited);
    EXPECT_NE(s.printed.find("recv packet 1472: no lossless rate: heaps lost at 2 Gb/s"),
              std::string::npos)
        << s.printed;
    EXPECT_EQ(s.printed.find("highest lossless rate 0"), std::string::npos);
}
