/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/spead/numpy_header.h>
#include <gtest/gtest.h>

using namespace gr::spead;

namespace {
constexpr bool little_endian_host = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
}

TEST(numpy_header_parse, reads_spead2_key_order)
{
    const auto dtype =
        parse_numpy_header("{'shape': (256,), 'fortran_order': False, 'descr': '>u4'}");
    ASSERT_TRUE(dtype);
    EXPECT_EQ(dtype->descr, ">u4");
    EXPECT_EQ(dtype->byte_order, '>');
    EXPECT_EQ(dtype->kind, 'u');
    EXPECT_EQ(dtype->itemsize, 4u);
    EXPECT_FALSE(dtype->fortran_order);
    EXPECT_EQ(dtype->shape, (std::vector<std::int64_t>{ 256 }));
}

TEST(numpy_header_parse, reads_numpy_npy_header_with_trailing_comma_and_padding)
{
    const auto dtype = parse_numpy_header(
        "{'descr': '<c8', 'fortran_order': True, 'shape': (3, 4), }          \n");
    ASSERT_TRUE(dtype);
    EXPECT_EQ(dtype->byte_order, '<');
    EXPECT_EQ(dtype->kind, 'c');
    EXPECT_EQ(dtype->itemsize, 8u);
    EXPECT_TRUE(dtype->fortran_order);
    EXPECT_EQ(dtype->shape, (std::vector<std::int64_t>{ 3, 4 }));
}

TEST(numpy_header_parse, reads_scalar_shape)
{
    const auto dtype =
        parse_numpy_header("{'descr': '<f8', 'fortran_order': False, 'shape': ()}");
    ASSERT_TRUE(dtype);
    EXPECT_TRUE(dtype->shape.empty());
}

TEST(numpy_header_parse, reads_double_quotes_and_python2_longs)
{
    const auto dtype = parse_numpy_header(
        "{\"descr\": \">i2\", \"fortran_order\": False, \"shape\": (2L, 5L)}");
    ASSERT_TRUE(dtype);
    EXPECT_EQ(dtype->kind, 'i');
    EXPECT_EQ(dtype->itemsize, 2u);
    EXPECT_EQ(dtype->shape, (std::vector<std::int64_t>{ 2, 5 }));
}

TEST(numpy_header_parse, one_byte_types_have_no_byte_order)
{
    const auto u1 =
        parse_numpy_header("{'descr': '|u1', 'fortran_order': False, 'shape': (8,)}");
    ASSERT_TRUE(u1);
    EXPECT_EQ(u1->byte_order, '|');
    const auto b1 =
        parse_numpy_header("{'descr': 'b1', 'fortran_order': False, 'shape': (8,)}");
    ASSERT_TRUE(b1);
    EXPECT_EQ(b1->kind, 'b');
    EXPECT_EQ(b1->itemsize, 1u);
    EXPECT_EQ(b1->byte_order, '|');
    const auto i1 =
        parse_numpy_header("{'descr': '<i1', 'fortran_order': False, 'shape': (8,)}");
    ASSERT_TRUE(i1);
    EXPECT_EQ(i1->byte_order, '|');
}

TEST(numpy_header_parse, native_order_becomes_the_hosts)
{
    const auto dtype =
        parse_numpy_header("{'descr': '=f4', 'fortran_order': False, 'shape': (1,)}");
    ASSERT_TRUE(dtype);
    EXPECT_EQ(dtype->byte_order, little_endian_host ? '<' : '>');
    EXPECT_EQ(dtype->descr, "=f4");
}

TEST(numpy_header_parse, rejects_malformed_or_unsupported_headers)
{
    const char* bad[] = {
        "",
        "{}",
        "{'descr': '>u4', 'fortran_order': False}",                 // no shape
        "{'descr': '>u4', 'fortran_order': False, 'shape': (3)}",   // int, not tuple
        "{'descr': '>u4', 'fortran_order': False, 'shape': (-3,)}", // negative
        "{'descr': '>u4', 'fortran_order': False, 'shape': (3,), 'x': 1}", // unknown key
        "{'descr': '>u4', 'descr': '>u4', 'fortran_order': False, 'shape': (3,)}", // repeated
        "{'descr': '>u4', 'fortran_order': false, 'shape': (3,)}",     // not Python
        "{'descr': '>u4', 'fortran_order': False, 'shape': (3,)} x",   // trailing text
        "{'descr': '>u4, 'fortran_order': False, 'shape': (3,)}",      // quoting
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,)}",      // object
        "{'descr': '<u3', 'fortran_order': False, 'shape': (3,)}",     // no such size
        "{'descr': '|u4', 'fortran_order': False, 'shape': (3,)}",     // order needed
        "{'descr': '<f16', 'fortran_order': False, 'shape': (3,)}",    // long double
        "{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (3,)}", // datetime
        "{'descr': [('a', '<u4')], 'fortran_order': False, 'shape': (3,)}", // structured
        "{'descr': '>u4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
        "{'descr': '>u4', 'fortran_order': False, 'shape': (3,)", // unclosed
    };
    for (const char* header : bad) {
        SCOPED_TRACE(header);
        EXPECT_FALSE(parse_numpy_header(header));
    }
}

TEST(numpy_dtype, needs_byteswap_only_for_multibyte_foreign_order)
{
    const auto big =
        parse_numpy_header("{'descr': '>u4', 'fortran_order': False, 'shape': ()}");
    const auto little =
        parse_numpy_header("{'descr': '<u4', 'fortran_order': False, 'shape': ()}");
    const auto byte =
        parse_numpy_header("{'descr': '|u1', 'fortran_order': False, 'shape': ()}");
    ASSERT_TRUE(big && little && byte);
    EXPECT_EQ(big->needs_byteswap(), little_endian_host);
    EXPECT_EQ(little->needs_byteswap(), !little_endian_host);
    EXPECT_FALSE(byte->needs_byteswap());
}

TEST(numpy_header_make, writes_spead2_key_order)
{
    EXPECT_EQ(make_numpy_header(">u4", { 256 }),
              "{'shape': (256,), 'fortran_order': False, 'descr': '>u4'}");
}

TEST(numpy_header_make, writes_python_tuples)
{
    EXPECT_EQ(make_numpy_header("<f4", {}),
              "{'shape': (), 'fortran_order': False, 'descr': '<f4'}");
    EXPECT_EQ(make_numpy_header("<c8", { 2, 3 }, true),
              "{'shape': (2, 3), 'fortran_order': True, 'descr': '<c8'}");
}

TEST(numpy_header_make, rejects_negative_dimensions_and_bad_descr)
{
    EXPECT_THROW(make_numpy_header("<f4", { -1 }), std::invalid_argument);
    EXPECT_THROW(make_numpy_header("", { 1 }), std::invalid_argument);
    EXPECT_THROW(make_numpy_header("<f4'", { 1 }), std::invalid_argument);
}

TEST(numpy_header_make, round_trips_through_parse)
{
    const auto dtype = parse_numpy_header(make_numpy_header("<i2", { 7, 1, 3 }, true));
    ASSERT_TRUE(dtype);
    EXPECT_EQ(dtype->descr, "<i2");
    EXPECT_EQ(dtype->shape, (std::vector<std::int64_t>{ 7, 1, 3 }));
    EXPECT_TRUE(dtype->fortran_order);
}
