/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The in-process transports: inproc_queue, send::inproc_stream into it and
// recv::inproc_reader out of it; send::streambuf_stream to memory and
// recv::buffer_reader back. No sockets, no flowgraph.

#include "packet_builder.h"
#include <gnuradio/spead/inproc_queue.h>
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/recv_buffer.h>
#include <gnuradio/spead/recv_inproc.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_inproc.h>
#include <gnuradio/spead/send_streambuf.h>
#include <gtest/gtest.h>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;

std::vector<std::uint8_t> bytes_of(const std::string& s)
{
    return std::vector<std::uint8_t>(s.begin(), s.end());
}

/*! A heap of item 0x1000 holding \p size bytes counting from \p first. */
struct payload_heap {
    payload_heap(std::size_t size, std::uint8_t first) : data(size)
    {
        std::iota(data.begin(), data.end(), first);
        h.add_item(0x1000, data.data(), data.size());
    }
    std::vector<std::uint8_t> data;
    send::heap h;
};

/*! The error send_heap() fails with (none: it did not fail). */
boost::system::error_code send_failure(send::stream& sender, const send::heap& h)
{
    try {
        sender.send_heap(h);
    } catch (const boost::system::system_error& e) {
        return e.code();
    }
    return {};
}

/*! Every heap of \p s until it ends. */
std::vector<recv::heap> drain(recv::stream& s)
{
    std::vector<recv::heap> out;
    for (;;) {
        recv::heap h;
        const auto r = s.pop(h, 10s);
        if (r == recv::stream::pop_result::heap)
            out.push_back(std::move(h));
        else {
            EXPECT_EQ(r, recv::stream::pop_result::stopped) << "no heap within 10 s";
            return out;
        }
    }
}

std::vector<std::uint8_t> item_bytes(const recv::heap& h, std::uint64_t id)
{
    const recv::item* it = h.find(id);
    if (!it)
        return {};
    return std::vector<std::uint8_t>(it->data, it->data + it->length);
}

TEST(inproc_queue, hands_packets_over_in_order_and_ends_once_stopped_and_empty)
{
    inproc_queue q;
    q.add_copy("ab", 2);
    q.add_copy("cde", 3);
    q.stop();
    std::vector<inproc_queue::packet> out;
    ASSERT_EQ(q.pop(out, 1, 0ms), inproc_queue::pop_result::packets);
    ASSERT_EQ(q.pop(out, 8, 0ms), inproc_queue::pop_result::packets);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0], bytes_of("ab"));
    EXPECT_EQ(out[1], bytes_of("cde"));
    EXPECT_EQ(q.pop(out, 8, 0ms), inproc_queue::pop_result::stopped);
    EXPECT_EQ(out.size(), 2u);
}

TEST(inproc_queue, refuses_packets_after_stop)
{
    inproc_queue q;
    q.stop();
    EXPECT_TRUE(q.is_stopped());
    EXPECT_THROW(q.add_copy("x", 1), std::logic_error);
    EXPECT_FALSE(q.add(q.make_packet(4)));
    EXPECT_EQ(q.size(), 0u);
}

TEST(inproc_queue, a_wait_times_out_when_empty_and_interrupt_ends_it_at_once)
{
    inproc_queue q;
    std::vector<inproc_queue::packet> out;
    EXPECT_EQ(q.pop(out, 1, 1ms), inproc_queue::pop_result::timeout);
    std::thread waker([&q] {
        std::this_thread::sleep_for(50ms);
        q.interrupt();
    });
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(q.pop(out, 1, 30s), inproc_queue::pop_result::timeout);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
    waker.join();
}

TEST(inproc_queue, reuses_the_buffers_readers_give_back)
{
    inproc_queue q;
    auto p = q.make_packet(1000);
    const std::uint8_t* memory = p.data();
    ASSERT_TRUE(q.add(std::move(p)));
    std::vector<inproc_queue::packet> out;
    ASSERT_EQ(q.pop(out, 1, 0ms), inproc_queue::pop_result::packets);
    q.recycle(out);
    EXPECT_TRUE(out.empty());
    auto again = q.make_packet(10);
    EXPECT_EQ(again.data(), memory);
    EXPECT_EQ(again.size(), 10u);
}

TEST(inproc_stream, refuses_no_queues_and_null_queues)
{
    boost::asio::io_context io;
    EXPECT_THROW(send::inproc_stream(io, send::stream_config(), {}),
                 std::invalid_argument);
    EXPECT_THROW(send::inproc_stream(io, send::stream_config(), { nullptr }),
                 std::invalid_argument);
    recv::stream s;
    EXPECT_THROW(s.emplace_reader<recv::inproc_reader>(nullptr), std::invalid_argument);
}

TEST(inproc_stream, heaps_cross_to_a_reader_whole_and_the_stop_heap_ends_it)
{
    boost::asio::io_context io;
    auto q = std::make_shared<inproc_queue>();
    recv::stream receiver;
    receiver.emplace_reader<recv::inproc_reader>(q);
    send::stream_config config;
    config.set_max_packet_size(1024);
    send::inproc_stream sender(io, config, { q });
    EXPECT_EQ(sender.get_queues().size(), 1u);
    payload_heap big(10000, 0), small(100, 7);
    sender.send_heap(big.h);
    sender.send_heap(small.h);
    send::heap end;
    end.add_end();
    sender.send_heap(end);

    const auto heaps = drain(receiver);
    ASSERT_EQ(heaps.size(), 2u);
    EXPECT_EQ(item_bytes(heaps[0], 0x1000), big.data);
    EXPECT_EQ(item_bytes(heaps[1], 0x1000), small.data);
    const recv_stats stats = receiver.get_stats();
    EXPECT_EQ(stats[recv_stat::heaps], 2u);
    EXPECT_EQ(stats[recv_stat::stop_heaps], 1u);
    EXPECT_EQ(stats[recv_stat::packets], sender.get_stats()[send_stat::packets]);
    EXPECT_GT(stats[recv_stat::packets], 10u);
}

TEST(inproc_stream, substream_i_goes_to_queue_i)
{
    boost::asio::io_context io;
    auto q0 = std::make_shared<inproc_queue>(), q1 = std::make_shared<inproc_queue>();
    send::inproc_stream sender(io, send::stream_config(), { q0, q1 });
    payload_heap a(10, 1), b(20, 2);
    sender.send_heap(a.h, -1, 1);
    sender.send_heap(b.h, -1, 0);
    q0->stop();
    q1->stop();
    recv::stream r0, r1;
    r0.emplace_reader<recv::inproc_reader>(q0);
    r1.emplace_reader<recv::inproc_reader>(q1);
    const auto h0 = drain(r0), h1 = drain(r1);
    ASSERT_EQ(h0.size(), 1u);
    ASSERT_EQ(h1.size(), 1u);
    EXPECT_EQ(item_bytes(h0[0], 0x1000), b.data);
    EXPECT_EQ(item_bytes(h1[0], 0x1000), a.data);
}

TEST(inproc_stream, a_heap_to_a_stopped_queue_fails_with_operation_aborted)
{
    boost::asio::io_context io;
    auto q = std::make_shared<inproc_queue>();
    q->stop();
    send::inproc_stream sender(io, send::stream_config(), { q });
    payload_heap a(10, 1);
    EXPECT_EQ(send_failure(sender, a.h), boost::asio::error::operation_aborted);
    EXPECT_EQ(sender.get_stats()[send_stat::heaps_failed], 1u);
}

TEST(inproc_reader, loses_nothing_to_a_slow_consumer)
{
    boost::asio::io_context io;
    auto q = std::make_shared<inproc_queue>();
    recv::stream_config config;
    config.set_queue_heaps(2); // the drop policy, which a network reader would follow
    recv::stream receiver(config);
    receiver.emplace_reader<recv::inproc_reader>(q);
    send::inproc_stream sender(io, send::stream_config(), { q });
    constexpr int heaps = 50;
    std::vector<payload_heap> sent;
    sent.reserve(heaps);
    for (int i = 0; i < heaps; i++) {
        sent.emplace_back(64, std::uint8_t(i));
        sender.send_heap(sent.back().h);
    }
    q->stop();
    std::this_thread::sleep_for(50ms); // the reader meets a full queue
    const auto got = drain(receiver);
    ASSERT_EQ(got.size(), std::size_t(heaps));
    for (int i = 0; i < heaps; i++)
        EXPECT_EQ(item_bytes(got[i], 0x1000), sent[i].data);
    EXPECT_EQ(receiver.get_stats()[recv_stat::heaps_dropped_queue_full], 0u);
}

TEST(inproc_reader, stop_ends_a_reader_waiting_on_an_empty_queue_promptly)
{
    auto q = std::make_shared<inproc_queue>();
    auto receiver = std::make_unique<recv::stream>();
    receiver->emplace_reader<recv::inproc_reader>(q);
    std::this_thread::sleep_for(20ms);
    const auto start = std::chrono::steady_clock::now();
    receiver->stop();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
    EXPECT_FALSE(q->is_stopped()); // the queue is the sender's to stop
}

TEST(streambuf_stream, writes_packets_back_to_back_that_a_buffer_reader_reads_back)
{
    boost::asio::io_context io;
    std::stringbuf memory;
    send::stream_config config;
    config.set_max_packet_size(512);
    payload_heap a(3000, 3), b(10, 9);
    std::uint64_t packets_sent = 0;
    {
        send::streambuf_stream sender(io, memory, config);
        sender.send_heap(a.h);
        sender.send_heap(b.h);
        packets_sent = sender.get_stats()[send_stat::packets];
    }
    const std::string written = memory.str();
    recv::stream receiver;
    auto& reader = receiver.emplace_reader<recv::buffer_reader>(
        reinterpret_cast<const std::uint8_t*>(written.data()), written.size());
    const auto heaps = drain(receiver); // ends at the end of the buffer
    EXPECT_EQ(reader.get_packets(), packets_sent);
    EXPECT_GT(packets_sent, 2u);
    ASSERT_EQ(heaps.size(), 2u);
    EXPECT_EQ(item_bytes(heaps[0], 0x1000), a.data);
    EXPECT_EQ(item_bytes(heaps[1], 0x1000), b.data);
}

TEST(streambuf_stream, a_full_buffer_fails_the_heap_with_eof)
{
    struct full_buffer : std::streambuf {
        std::streamsize xsputn(const char*, std::streamsize n) override
        {
            return n > 0 ? n - 1 : 0;
        }
    } full;
    boost::asio::io_context io;
    send::streambuf_stream sender(io, full);
    payload_heap a(10, 1);
    EXPECT_EQ(send_failure(sender, a.h), boost::asio::error::eof);
}

TEST(buffer_reader, counts_what_is_not_a_whole_packet_and_stops_there)
{
    const auto good = spead_test::packet(1, 4, 0, { 1, 2, 3, 4 });
    const auto cut = spead_test::packet(2, 4, 0, { 1, 2, 3, 4 });
    std::vector<std::uint8_t> data = good;
    data.insert(data.end(), cut.begin(), cut.end() - 1);
    recv::stream receiver;
    receiver.emplace_reader<recv::buffer_reader>(data.data(), data.size());
    EXPECT_EQ(drain(receiver).size(), 1u);
    EXPECT_EQ(receiver.get_stats()[recv_stat::packets_truncated], 1u);

    std::vector<std::uint8_t> junk = good;
    junk.insert(junk.end(), { 'd', 'e', 'a', 'd', 'b', 'e', 'e', 'f' });
    junk.insert(junk.end(), good.begin(), good.end());
    recv::stream receiver2;
    receiver2.emplace_reader<recv::buffer_reader>(junk.data(), junk.size());
    EXPECT_EQ(drain(receiver2).size(), 1u);
    EXPECT_EQ(receiver2.get_stats()[recv_stat::packets_bad_header], 1u);
}

TEST(buffer_reader, an_empty_buffer_ends_the_stream)
{
    recv::stream receiver;
    receiver.emplace_reader<recv::buffer_reader>(nullptr, 0);
    EXPECT_TRUE(drain(receiver).empty());
    EXPECT_TRUE(receiver.is_stopped());
}

} // namespace
