/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// substream_set: which substreams a receiver takes (first_substream's range or
// substream_ids' list), its one validation, and the lookup to an output.

#include <gnuradio/spead/substream_set.h>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using gr::spead::substream_set;
using ids = std::vector<std::uint64_t>;
constexpr std::uint64_t item = 0x3101;
constexpr std::size_t npos = substream_set::npos;

/*! The message choose() throws, or "" if it accepts. */
std::string
refusal(std::uint64_t first, const ids& list, std::size_t n, std::uint64_t item)
{
    try {
        substream_set::choose(first, list, n, item);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(SubstreamSet, FirstSubstreamTakesARangeInOrder)
{
    const substream_set s = substream_set::choose(8, {}, 4, item);
    EXPECT_EQ(s.size(), 4u);
    EXPECT_EQ(s.id(0), 8u);
    EXPECT_EQ(s.id(3), 11u);
    EXPECT_EQ(s.index_of(8), 0u);
    EXPECT_EQ(s.index_of(11), 3u);
    EXPECT_EQ(s.index_of(7), npos);
    EXPECT_EQ(s.index_of(12), npos);
    EXPECT_EQ(s.describe(), "8 .. 11");
}

TEST(SubstreamSet, IdsThatFormARangeTakeWhatFirstSubstreamTakes)
{
    const substream_set s = substream_set::choose(0, { 8, 9, 10, 11 }, 4, item);
    for (std::uint64_t v = 0; v < 20; v++)
        EXPECT_EQ(s.index_of(v), substream_set::choose(8, {}, 4, item).index_of(v)) << v;
}

TEST(SubstreamSet, IdsGoToTheOutputsInTheOrderGiven)
{
    const substream_set s = substream_set::choose(0, { 12, 3, 7 }, 3, item);
    EXPECT_EQ(s.index_of(12), 0u);
    EXPECT_EQ(s.index_of(3), 1u);
    EXPECT_EQ(s.index_of(7), 2u);
    EXPECT_EQ(s.index_of(4), npos);
    EXPECT_EQ(s.index_of(13), npos);
    EXPECT_EQ(s.id(1), 3u);
    EXPECT_EQ(s.describe(), "12, 3, 7");
}

TEST(SubstreamSet, SubstreamZeroAloneNeedsNoSubstreamItem)
{
    EXPECT_EQ(refusal(0, {}, 1, 0), "");
    EXPECT_EQ(refusal(0, { 0 }, 1, 0), "");
}

TEST(SubstreamSet, RefusalsNameTheParameterAndTheFix)
{
    EXPECT_EQ(refusal(4, {}, 2, 0).rfind("first_substream: 4 with no substream_item", 0),
              0u);
    EXPECT_EQ(refusal(~std::uint64_t(0), {}, 2, item)
                  .rfind("first_substream: 18446744073709551615 + 2 substreams passes "
                         "2^64",
                         0),
              0u);
    EXPECT_EQ(
        refusal(4, { 8, 9 }, 2, item)
            .rfind("first_substream: 4 with substream_ids: give one or the other", 0),
        0u);
    EXPECT_EQ(refusal(0, { 8, 9, 10 }, 2, item)
                  .rfind("substream_ids: 3 ids for 2 substreams (outputs)", 0),
              0u);
    EXPECT_EQ(refusal(0, { 8, 9 }, 2, 0)
                  .rfind("substream_ids: given with no "
                         "substream_item",
                         0),
              0u);
    EXPECT_EQ(
        refusal(0, { 8, 3, 8 }, 3, item).rfind("substream_ids: 8 is given twice", 0), 0u);
}

TEST(SubstreamSet, TextNamesIdsAndInclusiveRanges)
{
    EXPECT_EQ(substream_set::parse("8-11"), (ids{ 8, 9, 10, 11 }));
    EXPECT_EQ(substream_set::parse("8,9,10,11"), (ids{ 8, 9, 10, 11 }));
    EXPECT_EQ(substream_set::parse(" 12, 0-1 ,5 - 5"), (ids{ 12, 0, 1, 5 }));
    EXPECT_EQ(substream_set::parse("0x10"), (ids{ 16 }));
    EXPECT_EQ(substream_set::parse(""), ids{});
}

TEST(SubstreamSet, BadTextIsRefusedNamingSubstreamIds)
{
    for (const char* text : { "8-", "-3", "a", "8,,9", "11-8", "8-9-10", "1.5" }) {
        try {
            substream_set::parse(text);
            ADD_FAILURE() << text << " accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("substream_ids: '", 0), 0u) << e.what();
        }
    }
    EXPECT_THROW(substream_set::parse("0-100000"), std::invalid_argument);
}

} // namespace
