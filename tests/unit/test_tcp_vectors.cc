/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead2's TCP framing without spead2: a byte stream that `spead2_send --tcp --heaps 4
// --heap-size 10000 --items 2 --verify` wrote (captured by a plain listener into
// tests/vectors/spead2_send_tcp_4x10000.bin) played into a tcp_reader.

#include "tcp_helpers.h"
#include <gtest/gtest.h>
#include <fstream>
#include <iterator>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using namespace spead_test;

TEST(TcpVectors, Spead2SendTcpStreamIsFramedAndDecoded)
{
    std::ifstream in(std::string(GR_SPEAD_VECTORS_DIR) + "/spead2_send_tcp_4x10000.bin",
                     std::ios::binary);
    ASSERT_TRUE(in.good());
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    tcp_receiver rx;
    {
        auto c = raw_connect(rx.port());
        // In uneven pieces, so that packets straddle reads.
        for (std::size_t pos = 0; pos < bytes.size();) {
            const std::size_t n = std::min<std::size_t>(777, bytes.size() - pos);
            raw_send(
                c.get(),
                std::vector<std::uint8_t>(bytes.begin() + pos, bytes.begin() + pos + n));
            pos += n;
        }
    }
    const std::size_t data_heaps = spead_test::count_data_heaps(rx.stream, 10000);
    EXPECT_EQ(data_heaps, 4u);
    const recv_stats st = rx.stream.get_stats();
    EXPECT_EQ(st[recv_stat::packets_bad_header] + st[recv_stat::packets_truncated] +
                  st[recv_stat::packets_size_mismatch],
              0u);
    EXPECT_EQ(st[recv_stat::connections_framing_errors], 0u);
    EXPECT_EQ(st[recv_stat::connections_partial_frame], 0u);
    EXPECT_EQ(st[recv_stat::incomplete_heaps_evicted] +
                  st[recv_stat::incomplete_heaps_flushed],
              0u);
}

} // namespace
