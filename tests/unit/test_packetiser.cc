/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "byte_helpers.h"
#include "protocol/packetiser.h"
#include <gnuradio/spead/send_heap.h>
#include <gtest/gtest.h>
#include <numeric>

using namespace gr::spead;
using spead_test::from_hex;
using spead_test::packetise;

namespace {

std::uint64_t pointer_at(const std::vector<std::uint8_t>& packet, std::size_t index)
{
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; i++)
        v = (v << 8) | packet[8 + 8 * index + i];
    return v;
}

std::uint64_t imm(std::uint64_t id, std::uint64_t value)
{
    return (std::uint64_t(1) << 63) | (id << 40) | value;
}

std::uint64_t addr(std::uint64_t id, std::uint64_t address)
{
    return (id << 40) | address;
}

/*! packetise() makes \p h, as heap \p cnt, into the one packet \p hex. */
void expect_one_packet(const send::heap& h, std::uint64_t cnt, const char* hex)
{
    const auto packets = packetise(h, cnt, 1472);
    ASSERT_EQ(packets.size(), 1u);
    EXPECT_EQ(packets[0], from_hex(hex));
}

std::size_t n_pointers(const std::vector<std::uint8_t>& packet)
{
    return std::size_t(packet[6]) << 8 | packet[7];
}

} // namespace

TEST(packetiser, heap_of_immediates_gets_null_pointer_and_one_padding_byte)
{
    // Heap 2 of tests/vectors/spead64-40_immediate.pcap, byte for byte.
    send::heap h(flavour(40));
    h.add_immediate(0x1000, 0x4cf91f46);
    h.add_immediate(0x1001, 0x7220517d);
    expect_one_packet(
        h,
        2,
        "5304030500000007"
        "8000010000000002 8000020000000001 8000030000000000 8000040000000001"
        "801000004cf91f46 801001007220517d 0000000000000000"
        "00");
}

TEST(packetiser, stop_heap_is_stream_ctrl_then_null_in_57_bytes)
{
    send::heap h(flavour(40));
    h.add_end();
    expect_one_packet(
        h,
        4,
        "5304030500000006"
        "8000010000000004 8000020000000001 8000030000000000 8000040000000001"
        "8000060000000002 0000000000000000"
        "00");
}

TEST(packetiser, empty_heap_is_a_null_pointer_and_one_padding_byte)
{
    send::heap h(flavour(48));
    expect_one_packet(
        h,
        9,
        "5304020600000005"
        "8001000000000009 8002000000000001 8003000000000000 8004000000000001"
        "0000000000000000"
        "00");
}

TEST(packetiser, short_values_become_right_aligned_immediates)
{
    send::heap h(flavour(40));
    const std::uint8_t three[3] = { 0xaa, 0xbb, 0xcc };
    const std::uint8_t five[5] = { 1, 2, 3, 4, 5 };
    h.add_item(0x1000, three, sizeof(three));
    h.add_item(0x1001, five, sizeof(five));
    const auto packets = packetise(h, 1, 1472);
    ASSERT_EQ(packets.size(), 1u);
    EXPECT_EQ(pointer_at(packets[0], 4), 0x8010000000aabbccu);
    EXPECT_EQ(pointer_at(packets[0], 5), 0x8010010102030405u);
}

TEST(packetiser, values_wider_than_the_immediate_field_are_addressed)
{
    send::heap h(flavour(40));
    const std::uint8_t six[6] = { 1, 2, 3, 4, 5, 6 };
    h.add_item(0x1000, six, sizeof(six));
    const auto packets = packetise(h, 1, 1472);
    ASSERT_EQ(packets.size(), 1u);
    EXPECT_EQ(pointer_at(packets[0], 1), imm(0x02, 6)); // HEAP_SIZE
    EXPECT_EQ(pointer_at(packets[0], 4), addr(0x1000, 0));
    EXPECT_EQ(std::vector<std::uint8_t>(packets[0].end() - 6, packets[0].end()),
              (std::vector<std::uint8_t>{ 1, 2, 3, 4, 5, 6 }));
}

TEST(packetiser, allow_immediate_false_keeps_short_values_addressed)
{
    send::heap h(flavour(40));
    const std::uint8_t four[4] = { 9, 8, 7, 6 };
    h.add_item(0x1000, four, sizeof(four), false);
    const auto packets = packetise(h, 1, 1472);
    ASSERT_EQ(packets.size(), 1u);
    EXPECT_EQ(n_pointers(packets[0]), 5u); // no NULL: the heap has 4 payload bytes
    EXPECT_EQ(pointer_at(packets[0], 4), addr(0x1000, 0));
    EXPECT_EQ(packets[0].size(), 8u + 5 * 8 + 4);
}

TEST(packetiser, zero_length_items_take_an_address_but_no_bytes)
{
    send::heap h(flavour(40));
    const std::uint8_t four[4] = { 9, 8, 7, 6 };
    h.add_item(0x1000, four, 0, false);
    h.add_item(0x1001, four, 4, false);
    h.add_item(0x1002, four, 0, false);
    h.add_item(0x1003, four, 0); // may be immediate: value 0, as spead2
    const auto packets = packetise(h, 1, 1472);
    ASSERT_EQ(packets.size(), 1u);
    EXPECT_EQ(pointer_at(packets[0], 4), addr(0x1000, 0));
    EXPECT_EQ(pointer_at(packets[0], 5), addr(0x1001, 0));
    EXPECT_EQ(pointer_at(packets[0], 6), addr(0x1002, 4));
    EXPECT_EQ(pointer_at(packets[0], 7), imm(0x1003, 0));
    EXPECT_EQ(packets[0].size(), 8u + 8 * 8 + 4);
}

TEST(packetiser, item_pointers_span_packets_leaving_8_payload_bytes_each)
{
    // 64-byte packets: 40 prefix + 2 pointers + 8 payload bytes.
    send::heap h(flavour(40));
    std::vector<std::uint8_t> data(20);
    std::iota(data.begin(), data.end(), 0);
    for (std::uint64_t i = 0; i < 5; i++)
        h.add_item(0x1000 + i, data.data() + 4 * i, 4, false);
    const auto packets = packetise(h, 7, 64);
    ASSERT_EQ(packets.size(), 3u);

    EXPECT_EQ(packets[0].size(), 64u);
    EXPECT_EQ(n_pointers(packets[0]), 6u);
    EXPECT_EQ(pointer_at(packets[0], 1), imm(0x02, 20));
    EXPECT_EQ(pointer_at(packets[0], 2), imm(0x03, 0));
    EXPECT_EQ(pointer_at(packets[0], 3), imm(0x04, 8));
    EXPECT_EQ(pointer_at(packets[0], 4), addr(0x1000, 0));
    EXPECT_EQ(pointer_at(packets[0], 5), addr(0x1001, 4));

    EXPECT_EQ(packets[1].size(), 64u);
    EXPECT_EQ(pointer_at(packets[1], 2), imm(0x03, 8));
    EXPECT_EQ(pointer_at(packets[1], 3), imm(0x04, 8));
    EXPECT_EQ(pointer_at(packets[1], 4), addr(0x1002, 8));
    EXPECT_EQ(pointer_at(packets[1], 5), addr(0x1003, 12));

    EXPECT_EQ(packets[2].size(), 52u);
    EXPECT_EQ(n_pointers(packets[2]), 5u);
    EXPECT_EQ(pointer_at(packets[2], 2), imm(0x03, 16));
    EXPECT_EQ(pointer_at(packets[2], 3), imm(0x04, 4));
    EXPECT_EQ(pointer_at(packets[2], 4), addr(0x1004, 16));

    std::vector<std::uint8_t> payload;
    for (const auto& p : packets)
        payload.insert(payload.end(), p.begin() + 8 + 8 * n_pointers(p), p.end());
    EXPECT_EQ(payload, data);
}

TEST(packetiser, padding_spans_packets_when_immediates_need_several)
{
    // 4 immediates + NULL in 64-byte packets: 3 packets, 8 + 8 + 1 padding bytes.
    send::heap h(flavour(40));
    for (std::uint64_t i = 0; i < 4; i++)
        h.add_immediate(0x1000 + i, i + 1);
    const auto packets = packetise(h, 1, 64);
    ASSERT_EQ(packets.size(), 3u);
    EXPECT_EQ(pointer_at(packets[0], 1), imm(0x02, 17));
    EXPECT_EQ(pointer_at(packets[0], 4), imm(0x1000, 1));
    EXPECT_EQ(pointer_at(packets[1], 5), imm(0x1003, 4));
    EXPECT_EQ(n_pointers(packets[2]), 5u);
    EXPECT_EQ(pointer_at(packets[2], 2), imm(0x03, 16));
    EXPECT_EQ(pointer_at(packets[2], 3), imm(0x04, 1));
    EXPECT_EQ(pointer_at(packets[2], 4), addr(0x00, 0));
    EXPECT_EQ(packets[0].size(), 64u);
    EXPECT_EQ(packets[1].size(), 64u);
    EXPECT_EQ(packets[2].size(), 49u);
    EXPECT_EQ(std::vector<std::uint8_t>(packets[0].end() - 8, packets[0].end()),
              std::vector<std::uint8_t>(8, 0));
}

TEST(packetiser, large_item_spans_packets_zero_copy)
{
    send::heap h(flavour(40));
    std::vector<std::uint8_t> data(3000, 0x5a);
    h.add_item(0x1000, data.data(), data.size());
    send::packet_generator gen(h, 1, 1472);
    std::vector<std::uint8_t> header(1472);
    std::vector<send::packet_piece> pieces;

    EXPECT_EQ(gen.next(header.data(), pieces), 1472u);
    ASSERT_EQ(pieces.size(), 2u);
    EXPECT_EQ(pieces[0].data, header.data());
    EXPECT_EQ(pieces[0].length, 48u);
    EXPECT_EQ(pieces[1].data, data.data());
    EXPECT_EQ(pieces[1].length, 1424u);

    pieces.clear();
    EXPECT_EQ(gen.next(header.data(), pieces), 1472u);
    ASSERT_EQ(pieces.size(), 2u);
    EXPECT_EQ(pieces[0].length, 40u);
    EXPECT_EQ(pieces[1].data, data.data() + 1424);
    EXPECT_EQ(pieces[1].length, 1432u);

    pieces.clear();
    EXPECT_EQ(gen.next(header.data(), pieces), 40u + 144);
    ASSERT_EQ(pieces.size(), 2u);
    EXPECT_EQ(pieces[1].data, data.data() + 2856);
    EXPECT_FALSE(gen.has_next());
}

TEST(packetiser, padding_comes_from_the_header_buffer)
{
    send::heap h(flavour(40));
    h.add_end();
    send::packet_generator gen(h, 1, 1472);
    std::vector<std::uint8_t> header(1472, 0xee);
    std::vector<send::packet_piece> pieces;
    gen.next(header.data(), pieces);
    ASSERT_EQ(pieces.size(), 2u);
    EXPECT_EQ(pieces[1].data, header.data() + 56);
    EXPECT_EQ(pieces[1].length, 1u);
    EXPECT_EQ(pieces[1].data[0], 0);
}

TEST(packetiser, appends_pieces_without_reallocating_a_reserved_vector)
{
    send::heap h(flavour(40));
    std::vector<std::uint8_t> a(5000), b(7);
    h.add_item(0x1000, a.data(), a.size());
    h.add_item(0x1001, b.data(), b.size());
    send::packet_generator gen(h, 1, 1472);
    std::vector<std::uint8_t> header(1472);
    std::vector<send::packet_piece> pieces;
    pieces.reserve(64);
    const send::packet_piece* storage = pieces.data();
    std::size_t total = 0;
    while (gen.has_next())
        total += gen.next(header.data(), pieces);
    EXPECT_EQ(pieces.data(), storage);
    std::size_t payload = 0;
    for (const auto& piece : pieces)
        if (piece.data != header.data())
            payload += piece.length;
    EXPECT_EQ(payload, 5007u);
    EXPECT_EQ(gen.payload_size(), 5007u);
    EXPECT_LT(total, 5007u + 4 * 48);
}

TEST(packetiser, next_after_the_last_packet_returns_0_and_adds_nothing)
{
    send::heap h;
    h.add_immediate(0x1000, 1);
    send::packet_generator gen(h, 1, 1472);
    std::vector<std::uint8_t> header(1472);
    std::vector<send::packet_piece> pieces;
    gen.next(header.data(), pieces);
    pieces.clear();
    EXPECT_FALSE(gen.has_next());
    EXPECT_EQ(gen.next(header.data(), pieces), 0u);
    EXPECT_TRUE(pieces.empty());
}

TEST(packetiser, rounds_packet_size_down_to_a_multiple_of_8)
{
    send::heap h;
    std::vector<std::uint8_t> data(10000);
    h.add_item(0x1000, data.data(), data.size());
    send::packet_generator gen(h, 1, 1471);
    EXPECT_EQ(gen.max_packet_size(), 1464u);
    const auto packets = packetise(h, 1, 1471);
    for (std::size_t i = 0; i + 1 < packets.size(); i++)
        EXPECT_EQ(packets[i].size(), 1464u);
}

TEST(packetiser, rejects_packet_size_below_prefix_pointer_and_8_bytes)
{
    send::heap h;
    h.add_immediate(0x1000, 1);
    EXPECT_THROW(send::packet_generator(h, 1, 55), std::invalid_argument);
    EXPECT_THROW(send::packet_generator(h, 1, 0), std::invalid_argument);
    EXPECT_NO_THROW(send::packet_generator(h, 1, 56));
    EXPECT_NO_THROW(send::packet_generator(h, 1, 63));
}

TEST(packetiser, rejects_cnt_wider_than_heap_address_bits)
{
    send::heap h(flavour(40));
    h.add_immediate(0x1000, 1);
    EXPECT_THROW(send::packet_generator(h, std::uint64_t(1) << 40, 1472),
                 std::invalid_argument);
    EXPECT_NO_THROW(send::packet_generator(h, (std::uint64_t(1) << 40) - 1, 1472));
}

TEST(packetiser, rejects_payload_beyond_the_flavours_addresses)
{
    send::heap h(flavour(8)); // 255-byte heaps
    std::vector<std::uint8_t> data(256);
    h.add_item(0x1000, data.data(), data.size());
    EXPECT_THROW(send::packet_generator(h, 1, 1472), std::invalid_argument);
}

TEST(packetiser, writes_flavour_widths_in_the_header)
{
    send::heap h(flavour(48));
    h.add_immediate(0x1000, 0xbc8f);
    const auto packets = packetise(h, 1, 1472);
    ASSERT_EQ(packets.size(), 1u);
    EXPECT_EQ(std::vector<std::uint8_t>(packets[0].begin(), packets[0].begin() + 8),
              from_hex("5304020600000006"));
    EXPECT_EQ(pointer_at(packets[0], 4), 0x900000000000bc8fu); // 0x1000 << 48, immediate
}

// ---- repeated immediates (what a receiver placing packets by timestamp needs)

TEST(packetiser, repeated_immediates_are_in_every_packet_after_all_pointers_in_the_first)
{
    send::heap h(flavour(40));
    h.add_immediate(0x1600, 0x123456789a);
    h.add_immediate(0x1601, 3);
    std::vector<std::uint8_t> data(3000, 0x5a);
    h.add_item(0x1000, data.data(), data.size(), false);
    h.set_repeat_immediates(true);
    const auto packets = packetise(h, 7, 1472);
    ASSERT_EQ(packets.size(), 3u);

    ASSERT_EQ(n_pointers(packets[0]), 7u);
    EXPECT_EQ(pointer_at(packets[0], 4), imm(0x1600, 0x123456789a));
    EXPECT_EQ(pointer_at(packets[0], 5), imm(0x1601, 3));
    EXPECT_EQ(pointer_at(packets[0], 6), addr(0x1000, 0));
    for (std::size_t p = 1; p < packets.size(); p++) {
        ASSERT_EQ(n_pointers(packets[p]), 6u) << p;
        EXPECT_EQ(pointer_at(packets[p], 4), imm(0x1600, 0x123456789a)) << p;
        EXPECT_EQ(pointer_at(packets[p], 5), imm(0x1601, 3)) << p;
    }
}

TEST(packetiser, repeated_immediates_keep_payload_offsets_contiguous)
{
    send::heap h(flavour(40));
    h.add_immediate(0x1600, 1);
    std::vector<std::uint8_t> data(3000);
    std::iota(data.begin(), data.end(), 0);
    h.add_item(0x1000, data.data(), data.size(), false);
    h.set_repeat_immediates(true);
    const auto packets = packetise(h, 1, 1472);
    std::vector<std::uint8_t> payload;
    std::uint64_t expected_offset = 0;
    for (const auto& packet : packets) {
        const std::size_t n = n_pointers(packet);
        EXPECT_EQ(pointer_at(packet, 1), imm(0x02, 3000));            // HEAP_SIZE
        EXPECT_EQ(pointer_at(packet, 2), imm(0x03, expected_offset)); // HEAP_OFFSET
        const std::size_t length = pointer_at(packet, 3) & 0xffffffffff;
        ASSERT_EQ(packet.size(), 8 + 8 * n + length);
        payload.insert(payload.end(), packet.begin() + 8 + 8 * n, packet.end());
        expected_offset += length;
    }
    EXPECT_EQ(payload, data);
}

TEST(packetiser, without_repeat_later_packets_carry_no_item_pointers)
{
    send::heap h(flavour(40));
    h.add_immediate(0x1600, 1);
    std::vector<std::uint8_t> data(3000);
    h.add_item(0x1000, data.data(), data.size(), false);
    const auto packets = packetise(h, 1, 1472);
    ASSERT_EQ(packets.size(), 3u);
    EXPECT_EQ(n_pointers(packets[1]), 4u);
    EXPECT_EQ(n_pointers(packets[2]), 4u);
}

TEST(packetiser, repeated_immediates_need_every_pointer_in_one_packet)
{
    send::heap h(flavour(40));
    for (std::uint64_t id = 0x1000; id < 0x1010; id++)
        h.add_immediate(id, id);
    h.set_repeat_immediates(true);
    EXPECT_THROW(send::packet_generator(h, 1, 64), std::invalid_argument);
    EXPECT_NO_THROW(send::packet_generator(h, 1, 1472));
}
