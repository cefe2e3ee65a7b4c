/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// type_contradiction(): which descriptors spead.source says contradict its item_type,
// as one table (heap_to_stream counting them: test_heap_to_stream.cc).

#include "mapping/type_check.h"
#include <gnuradio/spead/numpy_header.h>
#include <gtest/gtest.h>

namespace {

using namespace gr::spead;

descriptor numpy(const std::string& descr, std::vector<std::int64_t> shape = { 1000 })
{
    descriptor d;
    d.id = 0x1000;
    d.name = "payload";
    d.numpy_header = make_numpy_header(descr, shape);
    return d;
}

descriptor format(std::vector<std::pair<char, std::int64_t>> fields)
{
    descriptor d;
    d.id = 0x1000;
    d.format = std::move(fields);
    d.shape = { 1000 };
    return d;
}

struct row {
    const char* type;
    descriptor d;
    const char* fix; //!< nullptr: no contradiction; "": one, with no type to set
};

TEST(TypeCheck, TheTableOfWhatContradictsItemType)
{
    const std::vector<row> table = {
        { "complex_float", numpy("<c8"), nullptr },
        { "complex_float", numpy(">c8"), nullptr }, // byte order is auto's job
        { "complex_float", numpy("<f4", { 1000, 2 }), nullptr },
        { "float", numpy("<c8"), nullptr }, // interleaved I/Q as floats
        { "complex_int16", numpy("<c8"), "item_type=complex_float" },
        { "complex_int16", numpy("<i2", { 1000, 2 }), nullptr },
        { "complex_int16", numpy("<f4"), "item_type=float" },
        { "int16", numpy(">u2"), nullptr },
        { "int8", numpy("|i1"), nullptr },
        { "int8", numpy("<i4"), "item_type=int32" },
        { "int32", numpy("<f4"), "item_type=float" },
        { "complex_int8", numpy("<c16"), "No item_type fits <c16" },
        { "complex_int16", format({ { 'i', 16 }, { 'i', 16 } }), nullptr },
        { "complex_float",
          format({ { 'i', 16 }, { 'i', 16 } }),
          "item_type=complex_int16" },
        { "int32", format({ { 'u', 32 } }), nullptr },
        // Scalars are metadata (a timestamp), and unknown formats say nothing.
        { "complex_float", numpy(">u8", {}), nullptr },
        { "complex_float", format({ { 'u', 16 }, { 'c', 8 } }), nullptr },
        { "complex_float", descriptor(), nullptr },
    };
    for (const row& r : table) {
        const std::string why = type_contradiction(item_type::parse(r.type), r.d);
        const std::string what =
            std::string(r.type) + " vs " +
            (r.d.numpy_header.empty() ? "a format" : r.d.numpy_header);
        if (!r.fix) {
            EXPECT_EQ(why, "") << what;
            continue;
        }
        EXPECT_NE(why.find(r.fix), std::string::npos) << what << ": " << why;
        EXPECT_NE(why.find(std::string("item_type is ") + r.type), std::string::npos)
            << why;
    }
}

} // namespace
