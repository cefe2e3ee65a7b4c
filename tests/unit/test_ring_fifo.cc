/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// ring_fifo: the FIFO both queues of a receive stream (heaps, chunks) are made of.

#include "streams/ring_fifo.h"
#include <gtest/gtest.h>
#include <memory>

using gr::spead::recv::ring_fifo;

namespace {
/*! The oldest entry, taken out with pop_into() (the queues' one way out). */
template <typename T>
T pop(ring_fifo<T>& q)
{
    T out{};
    q.pop_into(out);
    return out;
}
} // namespace

TEST(ring_fifo, keeps_order_while_it_grows_and_wraps)
{
    ring_fifo<int> q(100);
    int next_in = 0, next_out = 0;
    // Fill part-way, take some, fill again: the slots grow with entries wrapped.
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < 9; i++)
            q.push(next_in++);
        for (int i = 0; i < 5; i++)
            ASSERT_EQ(pop(q), next_out++);
    }
    while (!q.empty())
        ASSERT_EQ(pop(q), next_out++);
    EXPECT_EQ(next_out, next_in);
}

TEST(ring_fifo, is_full_at_its_capacity_and_says_its_size)
{
    ring_fifo<int> q(3);
    EXPECT_TRUE(q.empty());
    q.push(1);
    q.push(2);
    EXPECT_FALSE(q.full());
    q.push(3);
    EXPECT_TRUE(q.full());
    EXPECT_EQ(q.size(), 3u);
    EXPECT_EQ(q.capacity(), 3u);
    EXPECT_EQ(pop(q), 1);
    EXPECT_FALSE(q.full());
}

TEST(ring_fifo, back_is_the_newest_entry_and_can_be_changed)
{
    ring_fifo<int> q(4);
    q.push(1);
    q.push(2);
    q.back() += 10; // the chunk queue merges runs of lost positions this way
    EXPECT_EQ(pop(q), 1);
    EXPECT_EQ(pop(q), 12);
}

TEST(ring_fifo, holds_move_only_entries)
{
    ring_fifo<std::unique_ptr<int>> q(16);
    for (int i = 0; i < 12; i++)
        q.push(std::make_unique<int>(i));
    for (int i = 0; i < 12; i++)
        EXPECT_EQ(*pop(q), i);
}

TEST(ring_fifo, pop_into_moves_the_oldest_entry_over_what_out_held)
{
    ring_fifo<std::unique_ptr<int>> q(4);
    q.push(std::make_unique<int>(1));
    q.push(std::make_unique<int>(2));
    auto out = std::make_unique<int>(99); // a previous entry, released by the move
    q.pop_into(out);
    ASSERT_TRUE(out);
    EXPECT_EQ(*out, 1);
    EXPECT_EQ(q.size(), 1u);
    q.pop_into(out);
    EXPECT_EQ(*out, 2);
    EXPECT_TRUE(q.empty());
}
