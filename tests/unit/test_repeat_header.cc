/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// repeat_header: a heap's later packets recognised from the layout of one decoded
// packet, each only at the offset the caller predicts, and only when decode_packet()
// would accept it with the same fields.

#include "packet_builder.h"
#include "protocol/packet_decoder.h"
#include "protocol/repeat_header.h"
#include <gtest/gtest.h>

using gr::spead::decode_packet;
using gr::spead::decode_result;
using gr::spead::packet_header;
using gr::spead::repeat_header;
using bytes = std::vector<std::uint8_t>;

namespace {

constexpr std::int64_t heap_size = 4096;
constexpr std::size_t piece = 1000;

/*! A repeat_header that learnt heap 7's layout from its packet at offset 0. */
repeat_header learnt(int address_bits = 40)
{
    const bytes first =
        spead_test::packet(7, heap_size, 0, spead_test::pattern(piece), {}, address_bits);
    packet_header h;
    EXPECT_EQ(decode_packet(first.data(), first.size(), h), decode_result::ok);
    repeat_header r;
    EXPECT_TRUE(r.learn(h));
    return r;
}

bool matches(const repeat_header& r, const bytes& p, std::uint64_t next_offset)
{
    return r.match_next(p.data(), p.size(), next_offset);
}

} // namespace

TEST(repeat_header, matches_the_next_piece_only_at_the_predicted_offset)
{
    const repeat_header r = learnt();
    const bytes next =
        spead_test::packet(7, heap_size, piece, spead_test::pattern(piece));
    EXPECT_TRUE(matches(r, next, piece));
    // The same packet at any other predicted offset is not the next piece.
    EXPECT_FALSE(matches(r, next, 0));
    EXPECT_FALSE(matches(r, next, piece - 1));
    EXPECT_FALSE(matches(r, next, piece + 1));
    EXPECT_FALSE(matches(r, next, piece | (std::uint64_t(1) << 40)));
    // The last piece, shorter, ends exactly at the heap's end.
    const std::size_t last = heap_size - 4 * piece;
    EXPECT_TRUE(
        matches(r, spead_test::packet(7, heap_size, 4 * piece, bytes(last)), 4 * piece));
}

TEST(repeat_header, refuses_what_the_decoder_would_read_otherwise)
{
    const repeat_header r = learnt();
    const bytes payload = spead_test::pattern(piece);
    // Another heap, another heap size, another order of the specials.
    EXPECT_FALSE(matches(r, spead_test::packet(8, heap_size, piece, payload), piece));
    EXPECT_FALSE(matches(r, spead_test::packet(7, heap_size + 1, piece, payload), piece));
    EXPECT_FALSE(matches(r,
                         spead_test::raw_packet({ { true, 0x01, 7 },
                                                  { true, 0x02, heap_size },
                                                  { true, 0x04, piece },
                                                  { true, 0x03, piece } },
                                                payload),
                         piece));
    // A fifth pointer (an item) changes the header.
    EXPECT_FALSE(
        matches(r,
                spead_test::packet(7, heap_size, piece, payload, { { true, 0x1000, 1 } }),
                piece));
    // PAYLOAD_LENGTH that is not what follows the header: cut short, or lengthened.
    bytes cut = spead_test::packet(7, heap_size, piece, payload);
    cut.pop_back();
    EXPECT_FALSE(matches(r, cut, piece));
    bytes longer = spead_test::packet(7, heap_size, piece, payload);
    longer.push_back(0);
    EXPECT_FALSE(matches(r, longer, piece));
    // A piece that passes the heap's end, and a header with no payload.
    EXPECT_FALSE(matches(r, spead_test::packet(7, heap_size, 3500, payload), 3500));
    const bytes empty = spead_test::packet(7, heap_size, piece, {});
    EXPECT_FALSE(matches(r, empty, piece));
    // Nothing learnt, or forgotten.
    repeat_header none;
    const bytes next = spead_test::packet(7, heap_size, piece, payload);
    EXPECT_FALSE(matches(none, next, piece));
    repeat_header forgot = learnt();
    forgot.forget();
    EXPECT_FALSE(matches(forgot, next, piece));
}

TEST(repeat_header, an_offset_past_the_address_width_never_matches)
{
    // 16-bit addresses: a predicted offset with bits above them must not slip into the
    // pointer's id bits and match a packet of another layout.
    const repeat_header r = learnt(16);
    const bytes next =
        spead_test::packet(7, heap_size, piece, spead_test::pattern(piece), {}, 16);
    EXPECT_TRUE(matches(r, next, piece));
    EXPECT_FALSE(matches(r, next, piece | (std::uint64_t(1) << 16)));
    EXPECT_FALSE(matches(r, next, piece | (std::uint64_t(1) << 63)));
}

TEST(repeat_header, learns_only_the_four_specials_with_a_heap_size)
{
    packet_header h;
    const bytes with_item = spead_test::packet(
        7, heap_size, 0, spead_test::pattern(piece), { { true, 0x1000, 1 } });
    ASSERT_EQ(decode_packet(with_item.data(), with_item.size(), h), decode_result::ok);
    repeat_header r;
    EXPECT_FALSE(r.learn(h));
    const bytes unsized = spead_test::packet(7, -1, 0, spead_test::pattern(piece));
    ASSERT_EQ(decode_packet(unsized.data(), unsized.size(), h), decode_result::ok);
    EXPECT_FALSE(r.learn(h));
    EXPECT_FALSE(matches(r, unsized, 0));
}
