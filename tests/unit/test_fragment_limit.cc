/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/fragment_limit.h"
#include <gtest/gtest.h>

using gr::spead::fragment_limit;
using gr::spead::interval_set;
using gr::spead::recv_stat;
using gr::spead::recv_stats;

TEST(fragment_limit, choose_keeps_a_given_limit_and_scales_the_automatic_one)
{
    EXPECT_EQ(fragment_limit::choose(3, 1 << 30), 3u);
    EXPECT_EQ(fragment_limit::choose(0, 1024), fragment_limit::minimum);
    EXPECT_EQ(fragment_limit::choose(0, 64 << 20), std::size_t(64) << 10);
}

TEST(fragment_limit, record_adds_a_range_and_counts_nothing)
{
    fragment_limit limit(2);
    interval_set ranges;
    recv_stats stats;
    EXPECT_TRUE(limit.record(ranges, 0, 10, stats));
    EXPECT_TRUE(limit.record(ranges, 10, 20, stats)); // in order: still one range
    EXPECT_EQ(ranges.size(), 1u);
    EXPECT_EQ(stats[recv_stat::packets_duplicate] + stats[recv_stat::packets_overlap] +
                  stats[recv_stat::packets_over_heap_limits],
              0u);
}

TEST(fragment_limit, each_refusal_is_counted_in_its_own_counter)
{
    fragment_limit limit(2);
    interval_set ranges;
    recv_stats stats;
    ASSERT_TRUE(limit.record(ranges, 0, 10, stats));
    ASSERT_TRUE(limit.record(ranges, 20, 30, stats)); // two ranges: the limit
    EXPECT_FALSE(limit.record(ranges, 0, 10, stats));
    EXPECT_EQ(stats[recv_stat::packets_duplicate], 1u);
    EXPECT_FALSE(limit.record(ranges, 5, 15, stats));
    EXPECT_EQ(stats[recv_stat::packets_overlap], 1u);
    EXPECT_FALSE(limit.record(ranges, 40, 50, stats)); // a third range
    EXPECT_EQ(stats[recv_stat::packets_over_heap_limits], 1u);
    EXPECT_EQ(ranges.size(), 2u); // nothing changed
}
