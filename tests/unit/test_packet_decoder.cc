/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "packet_builder.h"
#include "protocol/packet_decoder.h"
#include <gtest/gtest.h>

using namespace gr::spead;
using spead_test::packet;
using spead_test::pattern;
using spead_test::raw_packet;

namespace {
decode_result decode(const std::vector<std::uint8_t>& bytes, packet_header& h)
{
    return decode_packet(bytes.data(), bytes.size(), h);
}
decode_result decode(const std::vector<std::uint8_t>& bytes)
{
    packet_header h;
    return decode(bytes, h);
}
/*! The four specials of 4-byte heap 1, then an immediate \p id = \p value, then 4
 * bytes of payload. */
std::vector<std::uint8_t> canonical_four_then(std::uint64_t id, std::uint64_t value)
{
    return raw_packet({ { true, 1, 1 },
                        { true, 2, 4 },
                        { true, 3, 0 },
                        { true, 4, 4 },
                        { true, id, value } },
                      pattern(4));
}
} // namespace

TEST(packet_decoder, decodes_specials_and_points_into_the_datagram)
{
    auto bytes = packet(
        7, 100, 40, pattern(16), { { true, 0x1000, 0xabcdef }, { false, 0x1001, 8 } });
    packet_header h;
    ASSERT_EQ(decode(bytes, h), decode_result::ok);
    EXPECT_EQ(h.heap_cnt, 7u);
    EXPECT_TRUE(h.has_heap_size);
    EXPECT_EQ(h.heap_size, 100u);
    EXPECT_EQ(h.payload_offset, 40u);
    EXPECT_EQ(h.payload_length, 16u);
    EXPECT_EQ(h.n_pointers, 6u);
    EXPECT_EQ(h.n_item_pointers, 2u);
    EXPECT_EQ(h.heap_address_bits, 40);
    EXPECT_EQ(h.pointers, bytes.data() + 8);
    EXPECT_EQ(h.payload, bytes.data() + 8 + 6 * 8);
}

TEST(packet_decoder, takes_the_flavour_from_each_packet)
{
    for (int bits : { 8, 16, 24, 32, 40, 48, 56 }) {
        packet_header h;
        ASSERT_EQ(decode(packet(1, 4, 0, pattern(4), {}, bits), h), decode_result::ok)
            << bits;
        EXPECT_EQ(h.heap_address_bits, bits);
    }
}

TEST(packet_decoder, heap_size_is_optional)
{
    packet_header h;
    ASSERT_EQ(decode(packet(3, -1, 1000, pattern(8)), h), decode_result::ok);
    EXPECT_FALSE(h.has_heap_size);
    EXPECT_EQ(h.payload_offset, 1000u);
}

TEST(packet_decoder, rejects_a_datagram_shorter_than_the_header_as_truncated)
{
    auto bytes = packet(1, 4, 0, pattern(4));
    packet_header h;
    for (std::size_t n = 0; n < 8; n++)
        EXPECT_EQ(decode_packet(bytes.data(), n, h), decode_result::truncated) << n;
}

TEST(packet_decoder, rejects_item_pointers_beyond_the_datagram_as_truncated)
{
    auto bytes = packet(1, 4, 0, pattern(4));
    packet_header h;
    // header says 4 pointers (32 bytes) but only 3 are present
    EXPECT_EQ(decode_packet(bytes.data(), 8 + 3 * 8, h), decode_result::truncated);
}

TEST(packet_decoder, rejects_payload_shorter_than_payload_length_as_truncated)
{
    auto bytes = packet(1, 16, 0, pattern(16));
    bytes.resize(bytes.size() - 1);
    EXPECT_EQ(decode(bytes), decode_result::truncated);
}

TEST(packet_decoder, rejects_trailing_bytes_as_size_mismatch)
{
    auto bytes = packet(1, 16, 0, pattern(16));
    bytes.push_back(0);
    EXPECT_EQ(decode(bytes), decode_result::size_mismatch);
}

TEST(packet_decoder, rejects_wrong_magic_version_and_widths_as_bad_header)
{
    const auto good = packet(1, 4, 0, pattern(4));
    struct {
        std::size_t byte;
        std::uint8_t value;
    } corruptions[] = { { 0, 0x54 }, { 1, 0x03 }, { 1, 0x05 }, { 2, 0x04 },
                        { 3, 0x04 }, { 2, 0x00 }, { 3, 0x08 }, { 3, 0x00 } };
    for (auto c : corruptions) {
        auto bytes = good;
        bytes[c.byte] = c.value;
        EXPECT_EQ(decode(bytes), decode_result::bad_header)
            << "byte " << c.byte << " = " << int(c.value);
    }
}

TEST(packet_decoder, rejects_missing_required_specials)
{
    for (std::uint64_t missing : { 0x01, 0x03, 0x04 }) {
        std::vector<spead_test::pointer> pointers;
        for (std::uint64_t id : { 0x01, 0x02, 0x03, 0x04 })
            if (id != missing)
                pointers.push_back({ true, id, id == 0x02 || id == 0x04 ? 4u : 0u });
        EXPECT_EQ(decode(raw_packet(pointers, pattern(4))), decode_result::bad_specials)
            << "missing " << missing;
    }
}

TEST(packet_decoder, rejects_repeated_specials)
{
    EXPECT_EQ(decode(canonical_four_then(1, 2)), decode_result::bad_specials);
}

TEST(packet_decoder, rejects_addressed_specials)
{
    auto bytes = raw_packet(
        { { true, 1, 1 }, { true, 2, 4 }, { false, 3, 0 }, { true, 4, 4 } }, pattern(4));
    EXPECT_EQ(decode(bytes), decode_result::bad_specials);
}

TEST(packet_decoder, rejects_offset_plus_length_beyond_heap_size_as_bad_offset)
{
    EXPECT_EQ(decode(packet(1, 100, 90, pattern(11))), decode_result::bad_offset);
    EXPECT_EQ(decode(packet(1, 100, 90, pattern(10))), decode_result::ok);
}

TEST(packet_decoder, rejects_huge_offsets_without_overflow)
{
    // offset near 2^40 - 1 with heap size 16: must not wrap around
    EXPECT_EQ(decode(packet(1, 16, (std::uint64_t(1) << 40) - 1, pattern(16))),
              decode_result::bad_offset);
}

TEST(packet_decoder, each_rejection_has_its_own_counter)
{
    EXPECT_EQ(stat_for(decode_result::truncated), recv_stat::packets_truncated);
    EXPECT_EQ(stat_for(decode_result::size_mismatch), recv_stat::packets_size_mismatch);
    EXPECT_EQ(stat_for(decode_result::bad_header), recv_stat::packets_bad_header);
    EXPECT_EQ(stat_for(decode_result::bad_specials), recv_stat::packets_bad_specials);
    EXPECT_EQ(stat_for(decode_result::bad_offset), recv_stat::packets_bad_offset);
}

TEST(packet_decoder, decodes_specials_in_any_order_and_among_items)
{
    auto bytes = raw_packet({ { true, 0x1000, 5 },
                              { true, 0x04, 8 },
                              { true, 0x03, 16 },
                              { false, 0x1001, 0 },
                              { true, 0x02, 24 },
                              { true, 0x01, 9 } },
                            pattern(8));
    packet_header h;
    ASSERT_EQ(decode(bytes, h), decode_result::ok);
    EXPECT_EQ(h.heap_cnt, 9u);
    EXPECT_EQ(h.heap_size, 24u);
    EXPECT_EQ(h.payload_offset, 16u);
    EXPECT_EQ(h.payload_length, 8u);
    EXPECT_EQ(h.n_item_pointers, 2u);
}

TEST(packet_decoder, rejects_a_repeated_special_after_the_canonical_four)
{
    EXPECT_EQ(decode(canonical_four_then(3, 0)), decode_result::bad_specials);
}
