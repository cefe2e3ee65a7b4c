/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The rdma transport's credits: path choice, the switch to SendRecv when rdma_depth or
// the ring is exhausted, waiting without a posted receive, and the receiver's check of
// where each write landed.

#include "transport/rdma/rdma_credits.h"
#include <gtest/gtest.h>
#include <vector>

using namespace gr::spead::rdma;

namespace {
grant ring_grant(std::uint32_t slots, std::uint32_t ring, std::uint32_t depth)
{
    grant g;
    g.recv_slots = slots;
    g.slot_size = 1000;
    g.ring_size = ring;
    g.rdma_depth = depth;
    return g;
}
} // namespace

TEST(RdmaCredits, SendRecvOnlyWithoutRing)
{
    send_credits c(ring_grant(2, 0, 0));
    auto ch = c.choose(100);
    EXPECT_EQ(ch.path, path::send_recv);
    c.commit(ch, 100);
    c.commit(c.choose(100), 100);
    // Both receives are used: a third message waits (no RNR).
    EXPECT_EQ(c.choose(100).path, path::wait);
    EXPECT_TRUE(c.update({ 1, 0, 0 }));
    EXPECT_EQ(c.choose(100).path, path::send_recv);
}

TEST(RdmaCredits, TooLargeForSlotWaitsAndNeverFits)
{
    send_credits c(ring_grant(4, 0, 0));
    EXPECT_EQ(c.choose(1001).path, path::wait);
    EXPECT_TRUE(c.never_fits(1001));
    send_credits r(ring_grant(4, 4096, 2));
    EXPECT_FALSE(r.never_fits(4096));
    EXPECT_TRUE(r.never_fits(4097));
}

TEST(RdmaCredits, SwitchesToSendRecvWhenDepthExceededInOrder)
{
    send_credits c(ring_grant(8, 10000, 2));
    std::vector<path> paths;
    for (int i = 0; i < 5; i++) {
        auto ch = c.choose(500);
        paths.push_back(ch.path);
        c.commit(ch, 500);
    }
    // Two writes in flight (rdma_depth), then SendRecv for the overflow: the order of
    // messages is the order of posting on the one QP, whatever the path.
    const std::vector<path> want = { path::rdma_write,
                                     path::rdma_write,
                                     path::send_recv,
                                     path::send_recv,
                                     path::send_recv };
    EXPECT_EQ(paths, want);
    EXPECT_EQ(c.writes_in_flight(), 2u);
    // The receiver frees the first write (and 3 receives): the ring path returns.
    EXPECT_TRUE(c.update({ 3, 500, 1 }));
    auto ch = c.choose(500);
    EXPECT_EQ(ch.path, path::rdma_write);
    EXPECT_EQ(ch.offset, 1000u);
}

TEST(RdmaCredits, WrapsWithPaddingAndNeverOverwritesUnreleased)
{
    send_credits c(ring_grant(16, 1000, 16));
    ring_tracker t(1000);
    auto a = c.choose(400);
    ASSERT_EQ(a.path, path::rdma_write);
    EXPECT_EQ(a.offset, 0u);
    c.commit(a, 400);
    ASSERT_TRUE(t.arrived(a.offset, 400));
    auto b = c.choose(400);
    EXPECT_EQ(b.offset, 400u);
    c.commit(b, 400);
    ASSERT_TRUE(t.arrived(b.offset, 400));
    // 300 does not fit the 200-byte tail, and 0.. is not released: SendRecv.
    auto d = c.choose(300);
    EXPECT_EQ(d.path, path::send_recv);
    // The receiver releases the first write: the next wraps to 0 (200 bytes padding).
    t.release_oldest();
    EXPECT_TRUE(c.update({ 1, t.released_bytes(), t.released_writes() }));
    auto e = c.choose(300);
    ASSERT_EQ(e.path, path::rdma_write);
    EXPECT_EQ(e.offset, 0u);
    EXPECT_EQ(e.padding, 200u);
    c.commit(e, 300);
    EXPECT_TRUE(t.arrived(0, 300));
    // Released bytes include the padding once the write after it is released.
    t.release_oldest();
    t.release_oldest();
    EXPECT_EQ(t.released_bytes(), 1300u);
    EXPECT_EQ(t.released_writes(), 3u);
}

TEST(RdmaCredits, TrackerRefusesWritesOutOfPlace)
{
    ring_tracker t(1000);
    EXPECT_FALSE(t.arrived(100, 10)); // not the next place
    EXPECT_FALSE(t.arrived(0, 0));    // empty
    EXPECT_FALSE(t.arrived(0, 1001)); // beyond the ring
    EXPECT_TRUE(t.arrived(0, 900));
    EXPECT_FALSE(t.arrived(0, 50));  // a wrap that was not needed
    EXPECT_FALSE(t.arrived(0, 200)); // would overwrite the unreleased 0..900
    t.release_oldest();
    EXPECT_TRUE(t.arrived(0, 200));
}

TEST(RdmaCredits, UpdateRefusesCountersGoingBackOrBeyondSent)
{
    send_credits c(ring_grant(4, 0, 0));
    c.commit(c.choose(10), 10);
    EXPECT_FALSE(c.update({ 2, 0, 0 })); // more released than sent
    EXPECT_TRUE(c.update({ 1, 0, 0 }));
    EXPECT_FALSE(c.update({ 0, 0, 0 })); // backwards
    EXPECT_EQ(c.messages_in_flight(), 0u);
}
