/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/cnt_index.h"
#include <gtest/gtest.h>
#include <map>
#include <random>

using gr::spead::cnt_index;

TEST(cnt_index, finds_what_was_inserted_and_nothing_else)
{
    cnt_index index(4);
    EXPECT_EQ(index.find(7), cnt_index::none);
    index.insert(7, 0);
    index.insert(1000, 3);
    EXPECT_EQ(index.find(7), 0u);
    EXPECT_EQ(index.find(1000), 3u);
    EXPECT_EQ(index.find(8), cnt_index::none);
}

TEST(cnt_index, erase_forgets_one_heap_and_keeps_the_rest)
{
    cnt_index index(4);
    index.insert(1, 0);
    index.insert(2, 1);
    index.insert(3, 2);
    index.erase(2, 1);
    EXPECT_EQ(index.find(2), cnt_index::none);
    EXPECT_EQ(index.find(1), 0u);
    EXPECT_EQ(index.find(3), 2u);
    index.insert(2, 1); // the slot is reused
    EXPECT_EQ(index.find(2), 1u);
}

TEST(cnt_index, probes_count_the_entries_compared)
{
    cnt_index index(1);
    std::uint64_t probes = 0;
    index.find(5, probes);
    EXPECT_EQ(probes, 0u); // empty: nothing compared
    index.insert(5, 0);
    index.find(5, probes);
    EXPECT_EQ(probes, 1u);
}

TEST(cnt_index, clear_forgets_every_heap)
{
    cnt_index index(2);
    index.insert(1, 0);
    index.insert(2, 1);
    index.clear();
    EXPECT_EQ(index.find(1), cnt_index::none);
    EXPECT_EQ(index.find(2), cnt_index::none);
}

// Colliding cnts and backward-shift deletion: a random mix of inserts and erases,
// checked against std::map at every step.
TEST(cnt_index, agrees_with_a_map_under_random_inserts_and_erases)
{
    constexpr std::size_t slots = 64;
    cnt_index index(slots);
    std::map<std::uint64_t, std::size_t> live; // cnt -> slot
    std::vector<std::uint64_t> slot_cnt(slots, 0);
    std::vector<bool> used(slots, false);
    std::mt19937_64 rng(1);
    for (int step = 0; step < 20000; step++) {
        const std::size_t slot = rng() % slots;
        if (used[slot]) {
            index.erase(slot_cnt[slot], slot);
            live.erase(slot_cnt[slot]);
            used[slot] = false;
        } else {
            // Small cnts collide often; a cnt that is live already is not inserted.
            std::uint64_t cnt = rng() % 200;
            if (live.count(cnt))
                continue;
            index.insert(cnt, slot);
            live[cnt] = slot;
            slot_cnt[slot] = cnt;
            used[slot] = true;
        }
        for (std::uint64_t cnt = 0; cnt < 200; cnt++) {
            const auto it = live.find(cnt);
            ASSERT_EQ(index.find(cnt), it == live.end() ? cnt_index::none : it->second)
                << "cnt " << cnt << " at step " << step;
        }
    }
}
