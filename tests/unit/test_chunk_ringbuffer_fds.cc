/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// chunk_ringbuffer's data_fd / space_fd (what asyncio waits on): readable exactly
// while a pop / a push would not wait.

#include <gnuradio/spead/recv_chunk_stream.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <thread>

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
