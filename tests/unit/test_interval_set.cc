/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/interval_set.h"
#include <gtest/gtest.h>

using gr::spead::interval_set;
using result = interval_set::insert_result;

namespace {
std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges(const interval_set& s)
{
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    for (auto r : s.ranges())
        out.emplace_back(r.begin, r.end);
    return out;
}
using pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

/*! A set holding \p held (inserted in that order, at most \p max_ranges apart). */
interval_set holding(const pairs& held, std::size_t max_ranges = 4)
{
    interval_set s;
    for (const auto& [begin, end] : held)
        EXPECT_EQ(s.insert(begin, end, max_ranges), result::added);
    return s;
}
} // namespace

TEST(interval_set, in_order_ranges_coalesce_into_one)
{
    interval_set s;
    for (std::uint64_t i = 0; i < 10; i++)
        ASSERT_EQ(s.insert(i * 10, i * 10 + 10, 4), result::added);
    EXPECT_EQ(ranges(s), (pairs{ { 0, 100 } }));
    EXPECT_TRUE(s.is_contiguous_from_zero(100));
}

TEST(interval_set, a_range_filling_a_gap_joins_both_neighbours)
{
    interval_set s = holding({ { 0, 10 }, { 20, 30 } });
    EXPECT_EQ(ranges(s), (pairs{ { 0, 10 }, { 20, 30 } }));
    EXPECT_EQ(s.insert(10, 20, 4), result::added);
    EXPECT_EQ(ranges(s), (pairs{ { 0, 30 } }));
}

TEST(interval_set, joins_left_or_right_only)
{
    interval_set s = holding({ { 50, 60 }, { 0, 10 } }, 8);
    s.insert(10, 20, 8); // joins left of the gap
    s.insert(40, 50, 8); // joins right
    EXPECT_EQ(ranges(s), (pairs{ { 0, 20 }, { 40, 60 } }));
}

TEST(interval_set, covered_range_is_a_duplicate)
{
    interval_set s = holding({ { 0, 100 } });
    EXPECT_EQ(s.insert(0, 100, 4), result::duplicate);
    EXPECT_EQ(s.insert(10, 20, 4), result::duplicate);
    EXPECT_EQ(ranges(s), (pairs{ { 0, 100 } }));
}

TEST(interval_set, partly_covered_range_is_an_overlap_and_changes_nothing)
{
    interval_set s = holding({ { 10, 20 }, { 30, 40 } });
    EXPECT_EQ(s.insert(5, 15, 4), result::overlap);
    EXPECT_EQ(s.insert(15, 35, 4), result::overlap);
    EXPECT_EQ(s.insert(35, 45, 4), result::overlap);
    EXPECT_EQ(s.insert(0, 50, 4), result::overlap);
    EXPECT_EQ(ranges(s), (pairs{ { 10, 20 }, { 30, 40 } }));
}

TEST(interval_set, refuses_more_separate_ranges_than_allowed)
{
    interval_set s;
    EXPECT_EQ(s.insert(0, 1, 2), result::added);
    EXPECT_EQ(s.insert(2, 3, 2), result::added);
    EXPECT_EQ(s.insert(4, 5, 2), result::too_many);
    EXPECT_EQ(s.insert(1, 2, 2), result::added); // merging is always allowed
    EXPECT_EQ(ranges(s), (pairs{ { 0, 3 } }));
}
