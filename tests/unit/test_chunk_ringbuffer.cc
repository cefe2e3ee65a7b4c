/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// chunk_ringbuffer: data_fd / space_fd (what asyncio waits on) are readable exactly
// while a pop / a push would not wait; chunks it lets go of are discarded.

#include <gnuradio/spead/recv_chunk_stream.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <thread>
#include <vector>

using namespace gr::spead;

namespace {

bool readable(int fd)
{
    pollfd p{ fd, POLLIN, 0 };
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

bool readable_within(int fd, int ms)
{
    pollfd p{ fd, POLLIN, 0 };
    return ::poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

} // namespace

TEST(ChunkRingbufferFds, DataFdIsReadableWhileAChunkIsThere)
{
    recv::chunk_ringbuffer ring(2);
    recv::stream_chunk a, b, *out = nullptr;
    const int fd = ring.data_fd();
    EXPECT_FALSE(readable(fd));
    ASSERT_EQ(ring.try_push(&a), recv::chunk_ringbuffer::result::ok);
    EXPECT_TRUE(readable(fd));
    ASSERT_EQ(ring.try_push(&b), recv::chunk_ringbuffer::result::ok);
    ASSERT_EQ(ring.try_pop(out), recv::chunk_ringbuffer::result::ok);
    EXPECT_TRUE(readable(fd)); // b is still there
    ASSERT_EQ(ring.try_pop(out), recv::chunk_ringbuffer::result::ok);
    EXPECT_FALSE(readable(fd));
}

TEST(ChunkRingbuffer, PopTakesTheOldestAndPopNewestTheNewest)
{
    recv::chunk_ringbuffer ring(3);
    recv::stream_chunk a, b, c, *out = nullptr;
    for (recv::stream_chunk* x : { &a, &b, &c })
        ASSERT_EQ(ring.try_push(x), recv::chunk_ringbuffer::result::ok);
    ASSERT_EQ(ring.pop_newest(out, std::chrono::microseconds(0)),
              recv::chunk_ringbuffer::result::ok);
    EXPECT_EQ(out, &c);
    ASSERT_EQ(ring.try_pop(out), recv::chunk_ringbuffer::result::ok);
    EXPECT_EQ(out, &a);
    ASSERT_EQ(ring.pop_newest(out, std::chrono::microseconds(0)),
              recv::chunk_ringbuffer::result::ok);
    EXPECT_EQ(out, &b);
    EXPECT_EQ(ring.pop_newest(out, std::chrono::microseconds(0)),
              recv::chunk_ringbuffer::result::timeout);
    ring.stop();
    EXPECT_EQ(ring.pop_newest(out, std::chrono::microseconds(0)),
              recv::chunk_ringbuffer::result::stopped);
}

TEST(ChunkRingbufferFds, SpaceFdIsReadableWhileThereIsRoom)
{
    recv::chunk_ringbuffer ring(1);
    recv::stream_chunk a, *out = nullptr;
    const int fd = ring.space_fd();
    EXPECT_TRUE(readable(fd));
    ASSERT_EQ(ring.try_push(&a), recv::chunk_ringbuffer::result::ok);
    EXPECT_FALSE(readable(fd));
    ASSERT_EQ(ring.try_pop(out), recv::chunk_ringbuffer::result::ok);
    EXPECT_TRUE(readable(fd));
}

TEST(ChunkRingbufferFds, StopMakesBothReadable)
{
    recv::chunk_ringbuffer ring(1);
    recv::stream_chunk a;
    ASSERT_EQ(ring.try_push(&a), recv::chunk_ringbuffer::result::ok);
    const int data = ring.data_fd(), space = ring.space_fd();
    EXPECT_NE(data, space);
    EXPECT_FALSE(readable(space));
    ring.stop();
    EXPECT_TRUE(readable(data));
    EXPECT_TRUE(readable(space));
}

TEST(ChunkRingbufferFds, APushFromAnotherThreadWakesAPollOnDataFd)
{
    recv::chunk_ringbuffer ring(1);
    recv::stream_chunk a;
    const int fd = ring.data_fd();
    std::thread producer([&] {
        EXPECT_EQ(ring.push(&a, std::chrono::seconds(10)),
                  recv::chunk_ringbuffer::result::ok);
    });
    EXPECT_TRUE(readable_within(fd, 10000));
    producer.join();
}

TEST(ChunkRingbufferDiscard, ChunksLeftInsideAreDiscardedWithTheRing)
{
    std::vector<recv::stream_chunk*> discarded;
    recv::stream_chunk a, b, *out = nullptr;
    {
        recv::chunk_ringbuffer ring(3);
        ring.set_discard([&](recv::stream_chunk* c) { discarded.push_back(c); });
        ASSERT_EQ(ring.try_push(&a), recv::chunk_ringbuffer::result::ok);
        ASSERT_EQ(ring.try_push(&b), recv::chunk_ringbuffer::result::ok);
        ASSERT_EQ(ring.try_pop(out), recv::chunk_ringbuffer::result::ok);
        EXPECT_TRUE(discarded.empty());
    }
    EXPECT_EQ(discarded, std::vector<recv::stream_chunk*>{ &b });
}

TEST(ChunkRingbufferDiscard, HandOnToAStoppedRingDiscards)
{
    std::vector<recv::stream_chunk*> discarded;
    recv::stream_chunk a;
    recv::chunk_ringbuffer ring(1);
    ring.set_discard([&](recv::stream_chunk* c) { discarded.push_back(c); });
    ring.stop();
    recv::hand_on_chunk(ring, &a);
    EXPECT_EQ(discarded, std::vector<recv::stream_chunk*>{ &a });
    EXPECT_EQ(ring.size(), 0u);
}
