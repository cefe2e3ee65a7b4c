/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/recent_heaps.h"
#include <gtest/gtest.h>

using gr::spead::recent_heaps;

namespace {
enum class fate { complete, incomplete };
}

TEST(recent_heaps, finds_a_heap_with_how_it_left)
{
    recent_heaps<fate> recent(4);
    recent.remember(10, fate::complete);
    recent.remember(11, fate::incomplete);
    ASSERT_NE(recent.find(10), nullptr);
    EXPECT_EQ(recent.find(10)->fate, fate::complete);
    EXPECT_EQ(recent.find(11)->fate, fate::incomplete);
    EXPECT_EQ(recent.find(12), nullptr); // above every cnt remembered
    EXPECT_EQ(recent.find(9), nullptr);  // below, but never remembered
}

TEST(recent_heaps, the_oldest_is_forgotten_once_full)
{
    recent_heaps<fate> recent(3);
    for (std::uint64_t cnt = 1; cnt <= 4; cnt++)
        recent.remember(cnt, fate::complete);
    EXPECT_EQ(recent.size(), 3u);
    EXPECT_EQ(recent.find(1), nullptr);
    for (std::uint64_t cnt = 2; cnt <= 4; cnt++)
        EXPECT_NE(recent.find(cnt), nullptr) << cnt;
}

TEST(recent_heaps, the_key_tells_apart_heaps_with_one_cnt)
{
    // A chunk assembler keys by timestamp: a restarted sender reuses cnts.
    recent_heaps<fate> recent(4);
    recent.remember(5, fate::complete, 1000);
    EXPECT_NE(recent.find(5, 1000), nullptr);
    EXPECT_EQ(recent.find(5, 2000), nullptr);
    EXPECT_EQ(recent.find(5), nullptr);
}

TEST(recent_heaps, forget_empties_it)
{
    recent_heaps<fate> recent(4);
    recent.remember(1, fate::complete);
    recent.remember(2, fate::complete);
    recent.forget();
    EXPECT_EQ(recent.size(), 0u);
    EXPECT_EQ(recent.find(1), nullptr);
    recent.remember(1, fate::incomplete); // remembered again after forgetting
    EXPECT_EQ(recent.find(1)->fate, fate::incomplete);
    EXPECT_EQ(recent.find(2), nullptr);
}

TEST(recent_heaps, with_no_capacity_it_remembers_nothing)
{
    recent_heaps<fate> recent(0);
    recent.remember(1, fate::complete);
    EXPECT_EQ(recent.find(1), nullptr);
    EXPECT_EQ(recent.capacity(), 0u);
}
