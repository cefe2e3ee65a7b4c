/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// A continuous stream fed by several connections (a sink's substreams, one connection
// each): one sender's stop heap ends its connection alone; the stream ends once the
// last sender has gone, with every sender's heaps placed.

#include "packet_builder.h"
#include "tcp_helpers.h"
#include <gtest/gtest.h>
#include <unistd.h>
#include <chrono>
#include <cstdint>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using bytes = std::vector<std::uint8_t>;
using spead_test::eventually;
using spead_test::tcp_receiver;

constexpr std::uint64_t timestamp_id = 0x1600;
constexpr std::uint64_t substream_id = 0x1601;
constexpr std::size_t heap_bytes = 64; // 16 items of 4 bytes
constexpr std::uint64_t positions = 4;

bytes payload(std::uint64_t k, std::uint64_t s)
{
    return spead_test::pattern(heap_bytes, std::uint8_t(3 * k + 100 * s + 1));
}

/*! Substream \p s's heaps at positions 0 .. positions - 1, then its stop heap. The
 * heap cnts differ between the substreams, as a sink's do (a continuous stream tells
 * data heaps apart by cnt, whichever connection they came by). */
bytes sender_bytes(std::uint64_t s)
{
    bytes out;
    for (std::uint64_t k = 0; k < positions; k++) {
        const bytes p = spead_test::packet(
            2 * k + s + 1,
            heap_bytes,
            0,
            payload(k, s),
            { { true, timestamp_id, k * heap_bytes / 4 }, { true, substream_id, s } });
        out.insert(out.end(), p.begin(), p.end());
    }
    const bytes stop = spead_test::raw_packet({ { true, 0x01, 2 * positions + s + 1 },
                                                { true, 0x02, 0 },
                                                { true, 0x03, 0 },
                                                { true, 0x04, 0 },
                                                { true, 0x06, 2 } },
                                              {});
    out.insert(out.end(), stop.begin(), stop.end());
    return out;
}

void write_all(int fd, const bytes& b)
{
    ASSERT_EQ(::write(fd, b.data(), b.size()), ssize_t(b.size()));
}

} // namespace

TEST(TcpContinuous, OneSendersStopHeapEndsItsConnectionAlone)
{
    recv::continuous_config c;
    c.timestamp_item = timestamp_id;
    c.item_bytes = 4;
    c.window_heaps = 4;
    c.chunk_positions = 2;
    c.substreams = 2;
    c.substream_item = substream_id;
    tcp_receiver rx(recv::tcp_config().set_max_connections(2),
                    recv::stream_config().set_continuous(c));
    auto first = spead_test::raw_connect(rx.port());
    auto second = spead_test::raw_connect(rx.port());
    ASSERT_TRUE(eventually([&] { return rx.reader.get_num_connections() == 2; }));
    write_all(first.get(), sender_bytes(0));
    // Its stop heap ends its connection, not the stream: the second is still served.
    ASSERT_TRUE(eventually(
        [&] { return rx.stream.get_stats()[recv_stat::connections_closed] == 1; }));
    EXPECT_EQ(rx.reader.get_num_connections(), 1u);
    EXPECT_FALSE(rx.stream.is_stopped());
    write_all(second.get(), sender_bytes(1));

    std::vector<bytes> got[2];
    for (;;) {
        recv::chunk_entry e;
        const auto r = rx.stream.pop_chunk(e, 10s);
        if (r != recv::stream::pop_result::heap)
            break;
        for (std::size_t p = 0; e.data && p < e.positions; p++)
            for (std::size_t s = 0; s < 2; s++) {
                EXPECT_EQ(e.data->fill(p, s), recv::position_fill::complete)
                    << "position " << e.first_index + p << " substream " << s;
                const std::uint8_t* d = e.data->data(s) + p * heap_bytes;
                got[s].emplace_back(d, d + heap_bytes);
            }
        if (e.data)
            rx.stream.return_chunk(std::move(e.data));
    }
    EXPECT_TRUE(rx.stream.is_stopped()); // the last sender gone: the stream ended
    for (std::uint64_t s = 0; s < 2; s++) {
        ASSERT_EQ(got[s].size(), positions) << "substream " << s;
        for (std::uint64_t k = 0; k < positions; k++)
            EXPECT_EQ(got[s][k], payload(k, s)) << "substream " << s << " position " << k;
    }
    const recv_stats st = rx.stream.get_stats();
    EXPECT_EQ(st[recv_stat::connections_closed], 2u);
    EXPECT_EQ(st[recv_stat::heaps], 2 * positions);
}
