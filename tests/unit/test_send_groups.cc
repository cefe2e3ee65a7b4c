/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::stream::async_send_heaps: a group queued all or none, one completion for the
// group, and group_mode::round_robin interleaving the packets of its heaps (spead2's
// GroupMode). Written to memory (streambuf_stream) and read back packet by packet.

#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_streambuf.h>
#include <gtest/gtest.h>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <cstdint>
#include <future>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace gr::spead;

/*! The heap cnt of each SPEAD-64-40 packet written back to back in \p bytes. */
std::vector<std::uint64_t> packet_cnts(const std::string& bytes)
{
    std::vector<std::uint64_t> out;
    std::size_t at = 0;
    while (at + 8 <= bytes.size()) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data() + at);
        const std::size_t items = std::size_t(p[6]) << 8 | p[7];
        std::uint64_t cnt = 0, payload = 0;
        for (std::size_t i = 0; i < items; i++) {
            std::uint64_t v = 0;
            for (int b = 0; b < 8; b++)
                v = v << 8 | p[8 + 8 * i + b];
            const std::uint64_t id = (v >> 40) & 0x7fffff;
            const std::uint64_t value = v & ((std::uint64_t(1) << 40) - 1);
            if (id == 0x01)
                cnt = value;
            else if (id == 0x04)
                payload = value;
        }
        out.push_back(cnt);
        at += 8 + 8 * items + payload;
    }
    EXPECT_EQ(at, bytes.size());
    return out;
}

struct payload_heap {
    explicit payload_heap(std::size_t size) : data(size)
    {
        std::iota(data.begin(), data.end(), std::uint8_t(size));
        h.add_item(0x1000, data.data(), data.size());
    }
    std::vector<std::uint8_t> data;
    send::heap h;
};

/*! What a group's completion handler was called with, and how often. */
struct completion {
    std::promise<std::pair<boost::system::error_code, std::size_t>> result;
    std::atomic<int> calls{ 0 };

    send::stream::completion_handler handler()
    {
        return [this](const boost::system::error_code& ec, std::size_t bytes) {
            if (calls++ == 0)
                result.set_value({ ec, bytes });
        };
    }
    /*! Runs \p io (where handlers are posted) and returns the first call's values. */
    std::pair<boost::system::error_code, std::size_t> get(boost::asio::io_context& io)
    {
        io.run();
        return result.get_future().get();
    }
};

/*! A stream that writes to memory, with max_heaps \p max_heaps. */
struct memory_stream {
    explicit memory_stream(std::size_t max_heaps = 4)
        : sender(io, memory, send::stream_config().set_max_heaps(max_heaps))
    {
    }
    boost::asio::io_context io;
    std::stringbuf memory;
    send::streambuf_stream sender;
};

/*! Heaps of 1, 2 and 3 packets (100-byte payload packets) sent as one group. */
std::vector<std::uint64_t> send_group(send::group_mode mode, completion& c)
{
    boost::asio::io_context io;
    std::stringbuf memory;
    send::stream_config config;
    config.set_max_packet_size(100 + 8 + 8 * 5);
    payload_heap a(50), b(150), d(250);
    send::streambuf_stream sender(io, memory, config);
    EXPECT_TRUE(sender.async_send_heaps(
        { { &a.h, 10, 0 }, { &b.h, 20, 0 }, { &d.h, 30, 0 } }, c.handler(), mode));
    sender.flush();
    EXPECT_FALSE(c.get(io).first);
    return packet_cnts(memory.str());
}

} // namespace

TEST(send_groups, round_robin_interleaves_one_packet_of_each_heap_in_turn)
{
    completion c;
    EXPECT_EQ(send_group(send::group_mode::round_robin, c),
              (std::vector<std::uint64_t>{ 10, 20, 30, 20, 30, 30 }));
    EXPECT_EQ(c.calls, 1);
}

TEST(send_groups, serial_sends_each_heap_whole)
{
    completion c;
    EXPECT_EQ(send_group(send::group_mode::serial, c),
              (std::vector<std::uint64_t>{ 10, 20, 20, 30, 30, 30 }));
    EXPECT_EQ(c.calls, 1);
}

TEST(send_groups, a_group_larger_than_the_queue_is_refused_whole)
{
    memory_stream m(2);
    payload_heap a(10);
    completion c;
    EXPECT_FALSE(m.sender.async_send_heaps(
        { { &a.h, 1, 0 }, { &a.h, 2, 0 }, { &a.h, 3, 0 } }, c.handler()));
    EXPECT_EQ(c.get(m.io).first, boost::asio::error::would_block);
    EXPECT_EQ(m.sender.get_stats()[send_stat::heaps_rejected_queue_full], 3u);
    EXPECT_EQ(m.memory.str(), "");
}

TEST(send_groups, bad_groups_are_refused_and_nothing_is_queued)
{
    memory_stream m;
    payload_heap a(10);
    EXPECT_THROW(m.sender.async_send_heaps({}, nullptr), std::invalid_argument);
    EXPECT_THROW(m.sender.async_send_heaps({ { &a.h, -1, 0 }, { &a.h, -1, 5 } }, nullptr),
                 std::invalid_argument);
    EXPECT_THROW(m.sender.async_send_heaps({ { nullptr, -1, 0 } }, nullptr),
                 std::invalid_argument);
    m.sender.send_heap(a.h);
    EXPECT_EQ(packet_cnts(m.memory.str()), std::vector<std::uint64_t>{ 1 }); // cnt unused
}
