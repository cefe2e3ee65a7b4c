/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::mem_reader: packets from memory into a recv::stream, replayed in batches and
// steps, or pushed by the caller until it closes or fails the reader.

#include "protocol/packetiser.h"
#include "transport/mem/mem_reader.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/send_heap.h>
#include <gtest/gtest.h>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;

constexpr std::size_t heap_bytes = 4000;
constexpr std::size_t packet_bytes = 1000; // 5 packets a heap

/*! \p heaps heaps (cnt 1, 2, ...) cut into packets, back to back in \p bytes. */
std::vector<recv::packet_view>
make_packets(std::size_t heaps, std::vector<std::uint8_t>& bytes, std::size_t& per_heap)
{
    const std::vector<std::uint8_t> value(heap_bytes, 0x5a);
    std::vector<std::size_t> sizes;
    std::vector<std::uint8_t> header(packet_bytes);
    std::vector<send::packet_piece> pieces;
    bytes.clear();
    for (std::size_t k = 0; k < heaps; k++) {
        send::heap h;
        h.add_item(0x1000, value.data(), value.size());
        send::packet_generator gen(h, k + 1, packet_bytes);
        while (gen.has_next()) {
            pieces.clear();
            sizes.push_back(gen.next(header.data(), pieces));
            for (const auto& p : pieces)
                bytes.insert(bytes.end(), p.data, p.data + p.length);
        }
    }
    per_heap = sizes.size() / heaps;
    std::vector<recv::packet_view> views;
    std::size_t pos = 0;
    for (std::size_t size : sizes) {
        views.push_back({ bytes.data() + pos, size });
        pos += size;
    }
    return views;
}

/*! The cnts of the complete heaps popped until the stream ends (at most 10 s). */
std::vector<std::uint64_t> pop_until_stopped(recv::stream& s)
{
    std::vector<std::uint64_t> cnts;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    recv::heap h;
    while (std::chrono::steady_clock::now() < deadline) {
        const auto r = s.pop(h, 100ms);
        if (r == recv::stream::pop_result::stopped)
            break;
        if (r == recv::stream::pop_result::heap && h.is_complete())
            cnts.push_back(h.cnt());
    }
    return cnts;
}

/*! A reader with no packets of its own that waits after them for push(), close() or
 * fail(). */
recv::mem_reader& held_open_reader(recv::stream& s)
{
    recv::mem_reader_config c;
    c.end_after_packets = false;
    return s.emplace_reader<recv::mem_reader>(std::vector<recv::packet_view>{}, c);
}

std::vector<std::uint64_t> cnts_to(std::uint64_t n)
{
    std::vector<std::uint64_t> out;
    for (std::uint64_t c = 1; c <= n; c++)
        out.push_back(c);
    return out;
}

TEST(MemReader, ReplaysEveryPacketThenEndsTheStream)
{
    std::vector<std::uint8_t> bytes;
    std::size_t per_heap = 0;
    auto packets = make_packets(20, bytes, per_heap);
    // A queue smaller than the heaps: the reader waits for room, nothing is lost.
    recv::stream s(recv::stream_config().set_queue_heaps(2));
    auto& r = s.emplace_reader<recv::mem_reader>(packets);
    EXPECT_EQ(pop_until_stopped(s), cnts_to(20));
    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::packets], 20 * per_heap);
    EXPECT_EQ(stats[recv_stat::heaps_dropped_queue_full], 0u);
    EXPECT_TRUE(r.has_started());
    EXPECT_FALSE(r.was_stopped());
}

TEST(MemReader, StepsCallTheHookBeforeEachAndOnceAtTheEnd)
{
    std::vector<std::uint8_t> bytes;
    std::size_t per_heap = 0;
    auto packets = make_packets(6, bytes, per_heap);
    std::vector<std::size_t> calls;
    recv::mem_reader_config c;
    c.batch = 1;
    c.packets_per_step = per_heap;
    c.before_step = [&calls](std::size_t done, const recv::mem_reader&) {
        calls.push_back(done);
        return true;
    };
    recv::stream s(recv::stream_config().set_queue_heaps(16));
    s.emplace_reader<recv::mem_reader>(packets, c);
    EXPECT_EQ(pop_until_stopped(s), cnts_to(6));
    EXPECT_EQ(calls, (std::vector<std::size_t>{ 0, 1, 2, 3, 4, 5, 6 }));
}

TEST(MemReader, AHookReturningFalseEndsTheInputThere)
{
    std::vector<std::uint8_t> bytes;
    std::size_t per_heap = 0;
    auto packets = make_packets(6, bytes, per_heap);
    recv::mem_reader_config c;
    c.packets_per_step = per_heap;
    c.before_step = [](std::size_t done, const recv::mem_reader&) { return done < 2; };
    recv::stream s(recv::stream_config().set_queue_heaps(16));
    s.emplace_reader<recv::mem_reader>(packets, c);
    EXPECT_EQ(pop_until_stopped(s), cnts_to(2));
}

TEST(MemReader, HeldOpenItTakesPushedPacketsUntilClosed)
{
    std::vector<std::uint8_t> bytes;
    std::size_t per_heap = 0;
    auto packets = make_packets(3, bytes, per_heap);
    recv::stream s(recv::stream_config().set_queue_heaps(16));
    auto& r = held_open_reader(s);
    EXPECT_TRUE(r.push(packets.data(), packets.size()));
    recv::heap h;
    ASSERT_EQ(s.pop(h, 2s), recv::stream::pop_result::heap);
    EXPECT_EQ(h.cnt(), 1u);
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(s.is_stopped()); // still open: more may come
    r.close();
    EXPECT_EQ(pop_until_stopped(s), (std::vector<std::uint64_t>{ 2, 3 }));
    EXPECT_FALSE(s.has_failed());
}

TEST(MemReader, FailEndsTheStreamWithItsMessage)
{
    recv::stream s;
    auto& r = held_open_reader(s);
    r.fail("the link went down; fix: plug it in");
    pop_until_stopped(s);
    EXPECT_TRUE(s.has_failed());
    EXPECT_NE(s.get_failure().find("the link went down; fix: plug it in"),
              std::string::npos);
}

TEST(MemReader, StopEndsAHeldOpenReader)
{
    recv::stream s;
    auto& r = held_open_reader(s);
    const auto start = std::chrono::steady_clock::now();
    s.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
    EXPECT_TRUE(r.was_stopped());
}

TEST(MemReader, ABatchOfZeroNamesTheParameter)
{
    recv::stream s;
    recv::mem_reader_config c;
    c.batch = 0;
    try {
        s.emplace_reader<recv::mem_reader>(std::vector<recv::packet_view>{}, c);
        FAIL() << "batch 0 was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("batch: 0"), std::string::npos);
    }
}

} // namespace
