/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// chunk_to_stream: a continuous stream's chunks onto spead.source's outputs, with the
// rx_time, heap_missing and heap_incomplete tags, without a flowgraph.

#include "mapping/chunk_to_stream.h"
#include <gtest/gtest.h>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace gr::spead;
using recv::position_fill;

constexpr std::size_t heap_bytes = 8; // 4 items of 2 bytes
constexpr std::size_t item_size = 2;

/*! A chunk of \p fills (per position, per substream), data = position × 10 + s. */
recv::chunk_entry make_entry(std::uint64_t first_index,
                             const std::vector<std::vector<position_fill>>& fills,
                             const std::vector<bool>& discontinuities = {})
{
    const std::size_t substreams = fills[0].size();
    auto c = std::make_unique<recv::chunk>(fills.size(), substreams, heap_bytes);
    c->reset(first_index);
    for (std::size_t p = 0; p < fills.size(); p++) {
        const bool jump = p < discontinuities.size() && discontinuities[p];
        c->set_position(p, { 1000 * (first_index + p), jump });
        for (std::size_t s = 0; s < substreams; s++) {
            c->set_fill(p, s, fills[p][s], fills[p][s] == position_fill::missing ? 0 : 6);
            std::uint8_t* at = c->data(s) + p * heap_bytes;
            for (std::size_t b = 0; b < heap_bytes; b++)
                at[b] = fills[p][s] == position_fill::missing
                            ? 0
                            : std::uint8_t((first_index + p) * 10 + s);
        }
    }
    recv::chunk_entry e;
    e.first_index = first_index;
    e.positions = fills.size();
    e.data = std::move(c);
    return e;
}

chunk_to_stream_config config(std::size_t outputs)
{
    chunk_to_stream_config c;
    c.item_size = item_size;
    c.outputs = outputs;
    c.rx_time = [](std::uint64_t t) { return pmt::from_uint64(t); };
    return c;
}

std::string describe(const output_tag& t)
{
    return std::to_string(t.port) + "@" + std::to_string(t.tag.offset) + " " +
           pmt::symbol_to_string(t.tag.key) + "=" +
           std::to_string(pmt::to_uint64(t.tag.value));
}

std::vector<std::string> describe(const std::vector<output_tag>& tags)
{
    std::vector<std::string> out;
    for (const auto& t : tags)
        out.push_back(describe(t));
    return out;
}

} // namespace

TEST(ChunkToStream, EachSubstreamGoesToItsOutputAndTheFirstItemGetsRxTime)
{
    chunk_to_stream series(config(2));
    series.take(make_entry(0,
                           { { position_fill::complete, position_fill::complete },
                             { position_fill::complete, position_fill::complete } }),
                heap_bytes);
    std::vector<std::uint8_t> a(16), b(16);
    gr_vector_void_star outputs{ a.data(), b.data() };
    std::vector<output_tag> tags;
    EXPECT_EQ(series.write(outputs, 0, 100, 500, tags), 8u);
    EXPECT_TRUE(series.chunk_done());
    EXPECT_EQ(a,
              (std::vector<std::uint8_t>{
                  0, 0, 0, 0, 0, 0, 0, 0, 10, 10, 10, 10, 10, 10, 10, 10 }));
    EXPECT_EQ(b[0], 1);
    EXPECT_EQ(b[8], 11);
    EXPECT_EQ(describe(tags),
              (std::vector<std::string>{ "0@500 rx_time=0", "1@500 rx_time=0" }));
}

TEST(ChunkToStream, AZeroFilledRunIsTaggedOnceOnItsOwnOutputWithItsItems)
{
    chunk_to_stream series(config(2));
    const auto m = position_fill::missing, c = position_fill::complete;
    series.take(make_entry(0, { { c, c }, { m, c }, { m, c }, { c, m } }), heap_bytes);
    std::vector<std::uint8_t> a(32), b(32);
    std::vector<output_tag> tags;
    series.write({ a.data(), b.data() }, 0, 16, 0, tags);
    EXPECT_EQ(describe(tags),
              (std::vector<std::string>{ "0@0 rx_time=0",
                                         "1@0 rx_time=0",
                                         "0@4 heap_missing=8",
                                         "1@12 heap_missing=4" }));
}

TEST(ChunkToStream, AChunkSplitOverCallsTagsEachPositionOnceAtItsFirstItem)
{
    chunk_to_stream series(config(1));
    const auto c = position_fill::complete, i = position_fill::incomplete;
    series.take(make_entry(4, { { c }, { i }, { c } }, { false, false, true }),
                heap_bytes);
    std::vector<std::uint8_t> out(24);
    std::vector<output_tag> tags;
    std::size_t at = 0;
    for (std::size_t step : { 3, 3, 3, 3 }) {
        gr_vector_void_star o{ out.data() };
        at += series.write(o, at, step, at, tags);
    }
    EXPECT_EQ(at, 12u);
    EXPECT_TRUE(series.chunk_done());
    EXPECT_EQ(describe(tags),
              (std::vector<std::string>{
                  "0@0 rx_time=4000", "0@4 heap_incomplete=6", "0@8 rx_time=6000" }));
    EXPECT_EQ(out[11], 50); // item 5: position 1 (output index 5)
    EXPECT_EQ(out[23], 60);
}

TEST(ChunkToStream, LostPositionsAreZerosAndWhatFollowsIsTaggedRxTimeAgain)
{
    chunk_to_stream series(config(1));
    const auto c = position_fill::complete;
    series.take(make_entry(0, { { c } }), heap_bytes);
    std::vector<std::uint8_t> out(64, 0xff);
    std::vector<output_tag> tags;
    std::size_t at = series.write({ out.data() }, 0, 100, 0, tags);
    EXPECT_EQ(series.give_back() != nullptr, true);
    recv::chunk_entry lost;
    lost.first_index = 1;
    lost.positions = 2;
    series.take(std::move(lost), heap_bytes);
    at += series.write({ out.data() }, at, 100, at, tags);
    EXPECT_EQ(series.give_back(), nullptr);
    series.take(make_entry(3, { { c } }), heap_bytes);
    at += series.write({ out.data() }, at, 100, at, tags);
    EXPECT_EQ(at, 16u);
    EXPECT_EQ(std::vector<std::uint8_t>(out.begin() + 8, out.begin() + 24),
              std::vector<std::uint8_t>(16, 0));
    EXPECT_EQ(describe(tags),
              (std::vector<std::string>{
                  "0@0 rx_time=0", "0@4 heap_missing=8", "0@12 rx_time=3000" }));
}

TEST(ChunkToStream, SwapReversesEachComponent)
{
    chunk_to_stream_config cfg = config(1);
    cfg.swap_unit = 2;
    chunk_to_stream series(cfg);
    auto e = make_entry(0, { { position_fill::complete } });
    for (std::size_t b = 0; b < heap_bytes; b++)
        e.data->data(0)[b] = std::uint8_t(b);
    series.take(std::move(e), heap_bytes);
    std::vector<std::uint8_t> out(8);
    std::vector<output_tag> tags;
    series.write({ out.data() }, 0, 4, 0, tags);
    EXPECT_EQ(out, (std::vector<std::uint8_t>{ 1, 0, 3, 2, 5, 4, 7, 6 }));
}
