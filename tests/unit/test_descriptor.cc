/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "byte_helpers.h"
#include <gnuradio/spead/descriptor.h>
#include <gtest/gtest.h>

using namespace gr::spead;
using spead_test::bytes_of;
using spead_test::from_hex;

namespace {

const std::string numpy_u4_1 = "{'shape': (1,), 'fortran_order': False, 'descr': '>u4'}";

/* The descriptor of a 1-element '>u4' item as spead2 4.4.1 sent it in
 * tests/vectors/spead64-40_immediate.pcap (186 bytes). */
std::vector<std::uint8_t> captured_descriptor_64_40()
{
    auto out = from_hex("530403050000000a8000010000000001"
                        "80000200000000628000030000000000"
                        "80000400000000628000140000001000"
                        "0000100000000000000011000000000b"
                        "000013000000002b000012000000002b"
                        "000015000000002b");
    const auto text =
        bytes_of("Test item 0A test item with arbitrary value" + numpy_u4_1);
    out.insert(out.end(), text.begin(), text.end());
    return out;
}

/* The same descriptor in tests/vectors/spead64-48_immediate.pcap. */
std::vector<std::uint8_t> captured_descriptor_64_48()
{
    auto out = from_hex("530402060000000a8001000000000001"
                        "80020000000000628003000000000000"
                        "80040000000000628014000000001000"
                        "0010000000000000001100000000000b"
                        "001300000000002b001200000000002b"
                        "001500000000002b");
    const auto text =
        bytes_of("Test item 0A test item with arbitrary value" + numpy_u4_1);
    out.insert(out.end(), text.begin(), text.end());
    return out;
}

descriptor test_item_descriptor()
{
    descriptor d;
    d.id = 0x1000;
    d.name = "Test item 0";
    d.description = "A test item with arbitrary value";
    d.numpy_header = numpy_u4_1;
    return d;
}

descriptor format_shape_descriptor()
{
    descriptor d;
    d.id = 0x1234;
    d.name = "timestamp";
    d.description = "ADC sample counter";
    d.format = { { 'u', 48 }, { 'f', 32 } };
    d.shape = { 4, -1, 0 };
    return d;
}

/* A one-packet heap with the given item pointers (64-40) and payload; the specials
 * are written to match the payload. */
struct test_pointer {
    bool immediate;
    std::uint64_t id;
    std::uint64_t value;
};

std::vector<std::uint8_t> descriptor_packet(const std::vector<test_pointer>& items,
                                            const std::string& payload)
{
    std::vector<test_pointer> pointers = { { true, 0x01, 1 },
                                           { true, 0x02, payload.size() },
                                           { true, 0x03, 0 },
                                           { true, 0x04, payload.size() } };
    pointers.insert(pointers.end(), items.begin(), items.end());
    std::vector<std::uint8_t> out = { 0x53, 0x04, 3, 5,
                                      0,    0,    0, std::uint8_t(pointers.size()) };
    for (const test_pointer& p : pointers) {
        const std::uint64_t v =
            (std::uint64_t(p.immediate) << 63) | (p.id << 40) | p.value;
        for (int i = 7; i >= 0; i--)
            out.push_back(std::uint8_t(v >> (8 * i)));
    }
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

std::optional<descriptor> decode(const std::vector<std::uint8_t>& bytes,
                                 bool pyspead_widths = false)
{
    return decode_descriptor(bytes.data(), bytes.size(), pyspead_widths);
}

} // namespace

// ---- encoding as spead2 writes it -------------------------------------------------

TEST(descriptor_encode, matches_spead2_bytes_in_64_40)
{
    EXPECT_EQ(encode_descriptor(test_item_descriptor(), flavour(40)),
              captured_descriptor_64_40());
}

TEST(descriptor_encode, matches_spead2_bytes_in_64_48)
{
    EXPECT_EQ(encode_descriptor(test_item_descriptor(), flavour(48)),
              captured_descriptor_64_48());
}

TEST(descriptor_encode, omits_dtype_pointer_without_numpy_header)
{
    descriptor d = test_item_descriptor();
    d.numpy_header.clear();
    const auto bytes = encode_descriptor(d, flavour(40));
    EXPECT_EQ(bytes[7], 9); // 4 specials + ID, NAME, DESCRIPTION, FORMAT, SHAPE
    EXPECT_EQ(bytes.size(), 8u + 9 * 8 + d.name.size() + d.description.size());
}

TEST(descriptor_encode, format_fields_are_9_minus_address_bytes_wide)
{
    descriptor d;
    d.id = 0x1001;
    d.format = { { 'u', 48 } };
    // 64-40: code + 3 bytes of bits; 64-48: code + 2 bytes
    const auto b40 = encode_descriptor(d, flavour(40));
    EXPECT_EQ(std::vector<std::uint8_t>(b40.end() - 4, b40.end()),
              from_hex("75 00 00 30"));
    const auto b48 = encode_descriptor(d, flavour(48));
    EXPECT_EQ(std::vector<std::uint8_t>(b48.end() - 3, b48.end()), from_hex("75 00 30"));
}

TEST(descriptor_encode, shape_fields_are_1_plus_address_bytes_wide_with_variable_flag_1)
{
    descriptor d;
    d.id = 0x1001;
    d.shape = { 256, -1 };
    const auto b40 = encode_descriptor(d, flavour(40));
    EXPECT_EQ(std::vector<std::uint8_t>(b40.end() - 12, b40.end()),
              from_hex("00 0000000100 01 0000000000"));
    const auto b48 = encode_descriptor(d, flavour(48));
    EXPECT_EQ(std::vector<std::uint8_t>(b48.end() - 14, b48.end()),
              from_hex("00 000000000100 01 000000000000"));
}

TEST(descriptor_encode, pyspead_widths_are_4_and_8_bytes_with_variable_flag_2)
{
    descriptor d;
    d.id = 0x1001;
    d.format = { { 'i', 8 } };
    d.shape = { 3, -1 };
    const auto bytes = encode_descriptor(d, flavour(48, true));
    EXPECT_EQ(std::vector<std::uint8_t>(bytes.end() - 20, bytes.end()),
              from_hex("69 000008"
                       "00 00000000000003"
                       "02 00000000000000"));
}

TEST(descriptor_encode, shape_bit_1_alone_marks_variable_dimensions_with_2)
{
    // spead2's BUG_COMPAT_SHAPE_BIT_1 without DESCRIPTOR_WIDTHS: the flavour's own
    // widths (SPEAD-64-40: format 4 bytes, shape 6), variable flag 2
    descriptor d;
    d.id = 0x1001;
    d.format = { { 'i', 8 } };
    d.shape = { 3, -1 };
    const flavour shape_bit_1(40, false, true);
    EXPECT_NE(shape_bit_1, flavour(40));
    const auto bytes = encode_descriptor(d, shape_bit_1);
    EXPECT_EQ(std::vector<std::uint8_t>(bytes.end() - 16, bytes.end()),
              from_hex("69 000008"
                       "00 0000000003"
                       "02 0000000000"));
    // and widths alone mark them with 1, as spead2's DESCRIPTOR_WIDTHS
    const auto widths_only = encode_descriptor(d, flavour(48, true, false));
    EXPECT_EQ(widths_only[widths_only.size() - 8], 0x01);
}

TEST(descriptor_encode, rejects_id_zero)
{
    descriptor d = test_item_descriptor();
    d.id = 0;
    EXPECT_THROW(encode_descriptor(d, flavour(40)), std::invalid_argument);
}

TEST(descriptor_encode, rejects_id_above_the_flavours_item_ids)
{
    descriptor d = test_item_descriptor();
    d.id = flavour(48).max_item_id() + 1; // 0x8000
    EXPECT_THROW(encode_descriptor(d, flavour(48)), std::invalid_argument);
    d.id = flavour(48).max_item_id();
    EXPECT_NO_THROW(encode_descriptor(d, flavour(48)));
}

TEST(descriptor_encode, rejects_format_bits_wider_than_the_field)
{
    descriptor d;
    d.id = 0x1001;
    d.format = { { 'u', 65536 } }; // 64-48 has 2 bytes of bits
    EXPECT_THROW(encode_descriptor(d, flavour(48)), std::invalid_argument);
    EXPECT_NO_THROW(encode_descriptor(d, flavour(40)));
    d.format = { { 'u', -8 } };
    EXPECT_THROW(encode_descriptor(d, flavour(40)), std::invalid_argument);
}

TEST(descriptor_encode, rejects_shape_dimensions_that_do_not_fit)
{
    descriptor d;
    d.id = 0x1001;
    d.shape = { std::int64_t(1) << 40 };
    EXPECT_THROW(encode_descriptor(d, flavour(40)), std::invalid_argument);
    d.shape = { -2 };
    EXPECT_THROW(encode_descriptor(d, flavour(40)), std::invalid_argument);
}

// ---- decoding ---------------------------------------------------------------------

TEST(descriptor_decode, reads_spead2_capture_64_40)
{
    EXPECT_EQ(decode(captured_descriptor_64_40()), test_item_descriptor());
}

TEST(descriptor_decode, reads_spead2_capture_64_48)
{
    EXPECT_EQ(decode(captured_descriptor_64_48()), test_item_descriptor());
}

TEST(descriptor_decode, round_trips_format_and_shape_in_every_flavour)
{
    for (int bits = 8; bits <= 56; bits += 8) {
        descriptor d = format_shape_descriptor();
        d.id = 0x12;                             // fits the 7-bit ids of 64-56
        d.format = { { 'u', 16 }, { 'f', 32 } }; // fits the 1-byte bits of 64-56
        d.shape = { 4, -1, 200 };                // fits the 1-byte dimensions of 64-8
        SCOPED_TRACE("SPEAD-64-" + std::to_string(bits));
        EXPECT_EQ(decode(encode_descriptor(d, flavour(bits))), d);
    }
}

TEST(descriptor_decode, round_trips_format_shape_and_numpy_header_together)
{
    descriptor d = format_shape_descriptor();
    d.numpy_header = "{'shape': (4,), 'fortran_order': False, 'descr': '<f4'}";
    EXPECT_EQ(decode(encode_descriptor(d, flavour(40))), d);
    EXPECT_EQ(decode(encode_descriptor(d, flavour(48))), d);
}

TEST(descriptor_decode, round_trips_pyspead_widths)
{
    const descriptor d = format_shape_descriptor();
    EXPECT_EQ(decode(encode_descriptor(d, flavour(40, true)), true), d);
    EXPECT_EQ(decode(encode_descriptor(d, flavour(48, true)), true), d);
}

TEST(descriptor_decode, round_trips_empty_strings_and_lists)
{
    descriptor d;
    d.id = 0x1001;
    EXPECT_EQ(decode(encode_descriptor(d, flavour(40))), d);
}

TEST(descriptor_decode, takes_pyspead_variable_flag_2_as_variable)
{
    // 64-40 shape field: flag byte + 5 bytes
    const auto bytes = descriptor_packet(
        { { true, 0x14, 0x1001 }, { false, 0x12, 0 } },
        std::string("\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x07", 12));
    const auto d = decode(bytes);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->shape, (std::vector<std::int64_t>{ -1, 7 }));
}

TEST(descriptor_decode, sizes_items_by_address_order_not_wire_order)
{
    // DESCRIPTION at 0, NAME at 4: lengths come from the sorted addresses.
    const auto d = decode(descriptor_packet(
        { { true, 0x14, 0x1001 }, { false, 0x10, 4 }, { false, 0x11, 0 } }, "descname"));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->description, "desc");
    EXPECT_EQ(d->name, "name");
}

TEST(descriptor_decode, keeps_zero_length_items_at_one_address_in_wire_order)
{
    // FORMAT and SHAPE both at 4 and empty; DTYPE at 4 holds the rest.
    const auto d = decode(descriptor_packet({ { true, 0x14, 0x1001 },
                                              { false, 0x10, 0 },
                                              { false, 0x13, 4 },
                                              { false, 0x12, 4 },
                                              { false, 0x15, 4 } },
                                            "name{}"));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name, "name");
    EXPECT_TRUE(d->format.empty());
    EXPECT_TRUE(d->shape.empty());
    EXPECT_EQ(d->numpy_header, "{}");
}

TEST(descriptor_decode, ignores_unknown_items_and_null_padding)
{
    const auto d = decode(descriptor_packet({ { true, 0x14, 0x1001 },
                                              { false, 0x10, 0 },
                                              { true, 0x999, 5 },
                                              { false, 0x777, 4 },
                                              { false, 0x00, 6 } },
                                            std::string("nameXY\0", 7)));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->id, 0x1001u);
    EXPECT_EQ(d->name, "name");
}

TEST(descriptor_decode, rejects_every_truncation)
{
    const auto full = captured_descriptor_64_40();
    for (std::size_t n = 0; n < full.size(); n++) {
        SCOPED_TRACE(n);
        EXPECT_FALSE(decode_descriptor(full.data(), n));
    }
}

TEST(descriptor_decode, rejects_trailing_bytes)
{
    auto bytes = captured_descriptor_64_40();
    bytes.push_back(0);
    EXPECT_FALSE(decode(bytes));
}

TEST(descriptor_decode, rejects_null_data)
{
    EXPECT_FALSE(decode_descriptor(nullptr, 100));
    EXPECT_FALSE(decode_descriptor(nullptr, 0));
}

TEST(descriptor_decode, rejects_bad_magic)
{
    auto bytes = captured_descriptor_64_40();
    bytes[0] = 0x54;
    EXPECT_FALSE(decode(bytes));
}

TEST(descriptor_decode, rejects_missing_descriptor_id)
{
    EXPECT_FALSE(decode(descriptor_packet({ { false, 0x10, 0 } }, "name")));
}

TEST(descriptor_decode, rejects_descriptor_id_zero)
{
    EXPECT_FALSE(
        decode(descriptor_packet({ { true, 0x14, 0 }, { false, 0x10, 0 } }, "name")));
}

TEST(descriptor_decode, rejects_descriptor_id_wider_than_the_flavours_item_ids)
{
    // 64-40 item ids have 23 bits; the 40-bit immediate could hold more.
    EXPECT_FALSE(decode(
        descriptor_packet({ { true, 0x14, 0x800000 }, { false, 0x10, 0 } }, "name")));
    EXPECT_TRUE(decode(
        descriptor_packet({ { true, 0x14, 0x7fffff }, { false, 0x10, 0 } }, "name")));
}

TEST(descriptor_decode, rejects_addressed_descriptor_id)
{
    EXPECT_FALSE(decode(
        descriptor_packet({ { false, 0x14, 0 }, { false, 0x10, 2 } }, "\x10\x01name")));
}

TEST(descriptor_decode, rejects_immediate_name)
{
    EXPECT_FALSE(
        decode(descriptor_packet({ { true, 0x14, 0x1001 }, { true, 0x10, 0x41 } }, "x")));
}

TEST(descriptor_decode, rejects_repeated_field)
{
    EXPECT_FALSE(decode(descriptor_packet(
        { { true, 0x14, 0x1001 }, { false, 0x10, 0 }, { false, 0x10, 2 } }, "abcd")));
    EXPECT_FALSE(decode(descriptor_packet(
        { { true, 0x14, 0x1001 }, { true, 0x14, 0x1002 }, { false, 0x10, 0 } }, "abcd")));
}

TEST(descriptor_decode, rejects_format_not_a_whole_number_of_fields)
{
    // 64-40 format fields are 4 bytes
    EXPECT_FALSE(decode(descriptor_packet({ { true, 0x14, 0x1001 }, { false, 0x13, 0 } },
                                          std::string("u\0\0\x08u", 5))));
}

TEST(descriptor_decode, rejects_shape_not_a_whole_number_of_fields)
{
    EXPECT_FALSE(decode(descriptor_packet({ { true, 0x14, 0x1001 }, { false, 0x12, 0 } },
                                          std::string(7, '\0'))));
}

TEST(descriptor_decode, rejects_unknown_shape_flag)
{
    EXPECT_FALSE(decode(descriptor_packet({ { true, 0x14, 0x1001 }, { false, 0x12, 0 } },
                                          std::string("\x04\0\0\0\0\x01", 6))));
}

TEST(descriptor_decode, rejects_address_beyond_payload)
{
    EXPECT_FALSE(decode(descriptor_packet(
        { { true, 0x14, 0x1001 }, { false, 0x10, 0 }, { false, 0x11, 9 } }, "name")));
}

TEST(descriptor_decode, rejects_a_heap_that_does_not_start_at_offset_0)
{
    auto bytes = captured_descriptor_64_40();
    bytes[8 + 1 * 8 + 7] = 0x63; // HEAP_SIZE 99 = offset 1 + payload 98
    bytes[8 + 2 * 8 + 7] = 1;    // HEAP_OFFSET 1
    EXPECT_FALSE(decode(bytes));
}

TEST(descriptor_decode, rejects_a_heap_larger_than_its_one_packet)
{
    auto bytes = captured_descriptor_64_40();
    bytes[8 + 1 * 8 + 7] = 0x63; // HEAP_SIZE 99, payload 98
    EXPECT_FALSE(decode(bytes));
}

TEST(descriptor_decode, rejects_more_than_64_item_pointers)
{
    std::vector<test_pointer> items = { { true, 0x14, 0x1001 } };
    for (int i = 0; i < 64; i++)
        items.push_back({ false, 0x00, 0 });
    EXPECT_FALSE(decode(descriptor_packet(items, "")));
    items.pop_back();
    EXPECT_TRUE(decode(descriptor_packet(items, "")));
}

TEST(descriptor_decode, every_single_byte_corruption_is_refused_or_well_formed)
{
    // Every byte of a real descriptor set to hostile values (run under ASan by the fuzz
    // job too): the decoder refuses it, or returns a descriptor that is well formed —
    // no field longer than the input, no shape below -1 (variable), format widths that
    // fit their 24-bit field and are not 0 — and that a spead2-style encoder writes and
    // reads back unchanged.
    const auto original = captured_descriptor_64_48();
    const auto intact = decode(original);
    ASSERT_TRUE(intact);
    std::size_t refused = 0, accepted = 0, unchanged = 0;
    for (std::size_t i = 0; i < original.size(); i++) {
        for (const std::uint8_t value : { 0x00, 0x01, 0x02, 0x7f, 0x80, 0xff }) {
            auto bytes = original;
            bytes[i] = value;
            for (const bool pyspead : { false, true }) {
                const auto d = decode(bytes, pyspead);
                if (!d) {
                    refused++;
                    continue;
                }
                accepted++;
                unchanged += *d == *intact;
                SCOPED_TRACE("byte " + std::to_string(i) + " = " + std::to_string(value) +
                             (pyspead ? ", PySPEAD widths" : ""));
                EXPECT_LE(d->name.size() + d->description.size() + d->numpy_header.size(),
                          original.size());
                for (const auto dim : d->shape)
                    EXPECT_GE(dim, -1);
                for (const auto& field : d->format) {
                    EXPECT_GE(field.second, 1);
                    EXPECT_LT(field.second, 1 << 24);
                }
                if (d->id <= flavour(48).max_item_id()) {
                    const auto again = encode_descriptor(*d, flavour(48));
                    // a DESCRIPTOR item's value is the one-packet heap this writes
                    const auto round_trip = decode(again);
                    ASSERT_TRUE(round_trip);
                    EXPECT_EQ(*round_trip, *d);
                }
            }
        }
    }
    // Both outcomes happen: the test does see damage refused and damage survived.
    EXPECT_GT(refused, 0u);
    EXPECT_GT(accepted, unchanged);
    EXPECT_EQ(refused + accepted, original.size() * 6 * 2);
}
