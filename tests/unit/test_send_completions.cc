/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Where send::stream runs completion handlers: posted to the io_context (default),
// and once flush() returns every handler is there; or inline on the writer thread
// (stream_config::set_inline_completions), where a handler may queue the next heap.

#include "protocol/packet_writer.h"
#include <gnuradio/spead/send_stream.h>
#include <condition_variable>
#include <gtest/gtest.h>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;

/*! Counts packets; with hold(), write_packets() waits (at most 10 s) for release(). */
class gated_writer : public send::packet_writer
{
public:
    std::size_t
    write_packets(const send::packet*, std::size_t n, boost::system::error_code&) override
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        d_changed.wait_for(lock, 10s, [this] { return !d_held; });
        d_packets += n;
        return n;
    }
    void hold()
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_held = true;
    }
    void release()
    {
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            d_held = false;
        }
        d_changed.notify_all();
    }

private:
    std::mutex d_mutex;
    std::condition_variable d_changed;
    bool d_held = false;
    std::size_t d_packets = 0;
};

class gated_stream : public send::stream
{
public:
    gated_stream(boost::asio::io_context& io, const send::stream_config& config)
        : stream(io, config, 1, std::make_unique<gated_writer>())
    {
    }
    ~gated_stream() override { w().release(); }
    void hold() { w().hold(); }
    void release() { w().release(); }

private:
    gated_writer& w() { return static_cast<gated_writer&>(writer()); }
};

struct small_heap {
    small_heap() : payload(3000, 0x5a)
    {
        h.add_item(0x1000, payload.data(), payload.size());
    }
    std::vector<std::uint8_t> payload;
    send::heap h;
};

/*! Waits (at most 10 s) until \p done. */
template <typename Pred>
bool wait_until(Pred done)
{
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    return done();
}

} // namespace

TEST(SendCompletions, InlineIsOffByDefault)
{
    EXPECT_FALSE(send::stream_config().get_inline_completions());
    EXPECT_TRUE(
        send::stream_config().set_inline_completions(true).get_inline_completions());
}

TEST(SendCompletions, PostedHandlersAreAllOnTheIoContextOnceFlushReturns)
{
    boost::asio::io_context io;
    gated_stream s(io, send::stream_config().set_max_heaps(8));
    small_heap heap;
    int done = 0;
    for (int i = 0; i < 8; i++)
        ASSERT_TRUE(s.async_send_heap(
            heap.h, [&done](const boost::system::error_code& ec, std::size_t) {
                EXPECT_FALSE(ec);
                done++;
            }));
    s.flush();
    EXPECT_EQ(done, 0); // nothing runs before the io_context does
    EXPECT_EQ(io.poll(), 8u);
    EXPECT_EQ(done, 8);
}

TEST(SendCompletions, InlineHandlersRunInOrderOnTheWriterThreadWithoutTheIoContext)
{
    boost::asio::io_context io;
    gated_stream s(io,
                   send::stream_config().set_max_heaps(8).set_inline_completions(true));
    small_heap heap;
    std::mutex mutex;
    std::vector<int> order;
    std::vector<std::thread::id> threads;
    for (int i = 0; i < 8; i++)
        ASSERT_TRUE(s.async_send_heap(
            heap.h, [&, i](const boost::system::error_code& ec, std::size_t bytes) {
                EXPECT_FALSE(ec);
                EXPECT_GT(bytes, 3000u);
                std::lock_guard<std::mutex> lock(mutex);
                order.push_back(i);
                threads.push_back(std::this_thread::get_id());
            }));
    s.flush(); // returns once the handlers have run
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(order, (std::vector<int>{ 0, 1, 2, 3, 4, 5, 6, 7 }));
    for (const auto& id : threads) {
        EXPECT_NE(id, std::this_thread::get_id());
        EXPECT_EQ(id, threads.front());
    }
    EXPECT_EQ(io.poll(), 0u);
}

TEST(SendCompletions, AnInlineHandlerMayQueueTheNextHeap)
{
    boost::asio::io_context io;
    gated_stream s(io,
                   send::stream_config().set_max_heaps(2).set_inline_completions(true));
    small_heap heap;
    constexpr int total = 50;
    std::atomic<int> queued{ 0 };
    std::atomic<int> completed{ 0 };
    std::function<void(const boost::system::error_code&, std::size_t)> refill =
        [&](const boost::system::error_code& ec, std::size_t) {
            EXPECT_FALSE(ec);
            completed++;
            if (queued < total) {
                queued++;
                EXPECT_TRUE(s.async_send_heap(heap.h, refill));
            }
        };
    queued = 2;
    ASSERT_TRUE(s.async_send_heap(heap.h, refill));
    ASSERT_TRUE(s.async_send_heap(heap.h, refill));
    EXPECT_TRUE(wait_until([&] { return completed == total; }));
    EXPECT_EQ(s.get_stats()[send_stat::heaps], std::uint64_t(total));
    EXPECT_EQ(s.get_stats()[send_stat::heaps_rejected_queue_full], 0u);
}

TEST(SendCompletions, AThrowingInlineHandlerDoesNotStopTheStream)
{
    boost::asio::io_context io;
    gated_stream s(io, send::stream_config().set_inline_completions(true));
    small_heap heap;
    std::atomic<int> completed{ 0 };
    ASSERT_TRUE(
        s.async_send_heap(heap.h, [&](const boost::system::error_code&, std::size_t) {
            completed++;
            throw std::runtime_error("handler failure");
        }));
    ASSERT_TRUE(s.async_send_heap(
        heap.h, [&](const boost::system::error_code&, std::size_t) { completed++; }));
    s.flush();
    EXPECT_EQ(completed, 2);
    EXPECT_EQ(s.get_stats()[send_stat::heaps], 2u);
}

TEST(SendCompletions, ARefusedHeapsHandlerIsPostedEvenInline)
{
    boost::asio::io_context io;
    gated_stream s(io,
                   send::stream_config().set_max_heaps(1).set_inline_completions(true));
    small_heap heap;
    s.hold();
    std::atomic<int> ok{ 0 };
    ASSERT_TRUE(s.async_send_heap(
        heap.h, [&](const boost::system::error_code& ec, std::size_t) { ok += !ec; }));
    boost::system::error_code refused;
    EXPECT_FALSE(s.async_send_heap(
        heap.h, [&](const boost::system::error_code& ec, std::size_t) { refused = ec; }));
    EXPECT_EQ(io.poll(), 1u);
    EXPECT_EQ(refused, boost::asio::error::would_block);
    s.release();
    s.flush();
    EXPECT_EQ(ok, 1);
}
