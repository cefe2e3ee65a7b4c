/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::stream's full_queue_policy: with block a reader waits for the consumer and no
// heap is lost; with drop the newest heap goes and is counted. Fake readers, no sockets:
// the feeding thread stands for a network reader's.

#include "error_message.h"
#include "fake_reader.h"
#include "packet_builder.h"
#include <gnuradio/spead/recv_stream.h>
#include <gtest/gtest.h>
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using spead_test::expect_invalid;
using spead_test::fake_reader;

/*! Single-packet heaps first, first + 1, ... */
std::vector<std::vector<std::uint8_t>> heaps(std::uint64_t first, std::size_t n)
{
    std::vector<std::vector<std::uint8_t>> out;
    for (std::size_t i = 0; i < n; i++)
        out.push_back(spead_test::packet(first + i, 16, 0, spead_test::pattern(16)));
    return out;
}

/*! Waits up to five seconds (a busy machine) for \p condition; true if it came. */
bool eventually(const std::function<bool()>& condition)
{
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!condition()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

recv::stream_config with_policy(recv::full_queue_policy policy, std::size_t queue)
{
    return recv::stream_config().set_queue_heaps(queue).set_full_queue_policy(policy);
}

std::uint64_t stat(const recv::stream& s, recv_stat which)
{
    return s.get_stats()[which];
}

TEST(RecvFullQueue, DropIsTheDefaultAndAnUnknownPolicyIsRejectedNamingIt)
{
    recv::stream_config c;
    EXPECT_EQ(c.get_full_queue_policy(), recv::full_queue_policy::drop);
    EXPECT_EQ(
        c.set_full_queue_policy(recv::full_queue_policy::block).get_full_queue_policy(),
        recv::full_queue_policy::block);
    expect_invalid(
        [&] { c.set_full_queue_policy(static_cast<recv::full_queue_policy>(7)); },
        "full_queue_policy");
    EXPECT_EQ(c.get_full_queue_policy(), recv::full_queue_policy::block);
}

TEST(RecvFullQueue, DropLosesTheNewestHeapsAndCountsThem)
{
    recv::stream s(with_policy(recv::full_queue_policy::drop, 2));
    auto& r = s.emplace_reader<fake_reader>();
    ASSERT_TRUE(eventually([&] { return r.started.load(); }));
    EXPECT_TRUE(r.feed(heaps(1, 5))); // never waits
    EXPECT_EQ(stat(s, recv_stat::heaps_dropped_queue_full), 3u);
    EXPECT_EQ(stat(s, recv_stat::reader_waits_queue_full), 0u);
    recv::heap h;
    ASSERT_TRUE(s.try_pop(h));
    EXPECT_EQ(h.cnt(), 1u);
}

TEST(RecvFullQueue, BlockMakesTheReaderWaitForASlowConsumerAndLosesNothing)
{
    recv::stream s(with_policy(recv::full_queue_policy::block, 2));
    auto& r = s.emplace_reader<fake_reader>();
    ASSERT_TRUE(eventually([&] { return r.started.load(); }));
    std::atomic<bool> fed{ false };
    std::thread reader_thread([&] {
        EXPECT_TRUE(r.feed(heaps(1, 20)));
        fed = true;
    });
    // The queue holds 2: the reader waits, and nothing has been dropped.
    ASSERT_TRUE(
        eventually([&] { return stat(s, recv_stat::reader_waits_queue_full) > 0; }));
    EXPECT_FALSE(fed.load());
    std::vector<std::uint64_t> got;
    recv::heap h;
    while (got.size() < 20 && s.pop(h, 5s) == recv::stream::pop_result::heap) {
        got.push_back(h.cnt());
        std::this_thread::sleep_for(1ms); // the slow consumer
    }
    reader_thread.join();
    ASSERT_EQ(got.size(), 20u);
    for (std::size_t i = 0; i < got.size(); i++)
        EXPECT_EQ(got[i], i + 1);
    EXPECT_TRUE(fed.load());
    EXPECT_EQ(stat(s, recv_stat::heaps), 20u);
    EXPECT_EQ(stat(s, recv_stat::heaps_dropped_queue_full), 0u);
}

TEST(RecvFullQueue, BlockCostsNothingWhileTheQueueHasRoom)
{
    recv::stream s(with_policy(recv::full_queue_policy::block, 8));
    auto& r = s.emplace_reader<fake_reader>();
    ASSERT_TRUE(eventually([&] { return r.started.load(); }));
    EXPECT_TRUE(r.feed(heaps(1, 8))); // the test's own thread: it must not wait
    EXPECT_EQ(stat(s, recv_stat::reader_waits_queue_full), 0u);
    EXPECT_EQ(stat(s, recv_stat::heaps_dropped_queue_full), 0u);
}

TEST(RecvFullQueue, BlockWithDeliveredIncompleteHeapsKeepsRoomForAnEvictionToo)
{
    // One live heap: each new heap evicts the previous, incomplete, one and delivers
    // it, so a packet may queue two heaps; none may be dropped.
    recv::stream s(with_policy(recv::full_queue_policy::block, 2)
                       .set_max_heaps(1)
                       .set_incomplete_heaps(recv::incomplete_heaps::deliver));
    auto& r = s.emplace_reader<fake_reader>();
    ASSERT_TRUE(eventually([&] { return r.started.load(); }));
    std::vector<std::vector<std::uint8_t>> packets;
    for (std::uint64_t cnt = 1; cnt <= 10; cnt++) // first half of each heap only
        packets.push_back(spead_test::packet(cnt, 32, 0, spead_test::pattern(16)));
    std::thread reader_thread([&] { EXPECT_TRUE(r.feed(packets)); });
    std::size_t got = 0;
    recv::heap h;
    while (got < 9 && s.pop(h, 5s) == recv::stream::pop_result::heap)
        got++;
    reader_thread.join();
    EXPECT_EQ(got, 9u); // the tenth is still live
    EXPECT_EQ(stat(s, recv_stat::incomplete_heaps_delivered), 9u);
    EXPECT_EQ(stat(s, recv_stat::heaps_dropped_queue_full), 0u);
}

TEST(RecvFullQueue, StopEndsAReaderWaitingForRoomAndItsPacketsAreCounted)
{
    recv::stream s(with_policy(recv::full_queue_policy::block, 1));
    auto& r = s.emplace_reader<fake_reader>();
    ASSERT_TRUE(eventually([&] { return r.started.load(); }));
    std::atomic<bool> open{ true };
    std::thread reader_thread([&] { open = r.feed(heaps(1, 5)); });
    ASSERT_TRUE(
        eventually([&] { return stat(s, recv_stat::reader_waits_queue_full) > 0; }));
    const auto before = std::chrono::steady_clock::now();
    s.stop();
    reader_thread.join();
    EXPECT_LT(std::chrono::steady_clock::now() - before, 2s);
    EXPECT_FALSE(open.load());
    // Every packet ends in one counter: a heap queued, or after the stop.
    const recv_stats st = s.get_stats();
    EXPECT_EQ(st[recv_stat::heaps] + st[recv_stat::packets_after_stop], 5u);
    EXPECT_EQ(st[recv_stat::heaps], 1u);
    EXPECT_EQ(st[recv_stat::heaps_dropped_queue_full], 0u);
}

} // namespace
