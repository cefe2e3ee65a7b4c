/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// stream_to_chunk: the heaps spead.sink sends with input_mode="continuous", without
// a flowgraph: timestamps per round, rx_time re-basing, substreams, cnts, wraps.

#include "mapping/stream_to_chunk.h"
#include <gnuradio/spead/item_ids.h>
#include <gtest/gtest.h>
#include <map>
#include <vector>

namespace {

using namespace gr::spead;

stream_to_chunk_config config()
{
    stream_to_chunk_config c;
    c.type = item_type::parse("float");
    c.item_bytes = 4;
    c.heap_items = 1024;
    c.timestamp_item = 0x1600;
    c.timestamp_step = 1024;
    return c;
}

/*! config() with rx_time tags turned into timestamps at \p sample_rate. */
stream_to_chunk_config timed(double sample_rate, double sync_time = 0.0)
{
    stream_to_chunk_config c = config();
    c.sample_rate = sample_rate;
    c.sync_time = sync_time;
    return c;
}

/*! A heap's immediates and payload, as stream_to_chunk built it. */
struct built {
    std::uint64_t cnt;
    std::map<std::uint64_t, std::uint64_t> immediates;
    const std::uint8_t* payload = nullptr;
    std::size_t payload_length = 0;
    bool repeat;
};

built build(stream_to_chunk& f, std::size_t input, const std::uint8_t* payload)
{
    send::heap h(flavour(40));
    built out;
    out.cnt = f.build_heap(h, input, payload);
    out.repeat = h.get_repeat_immediates();
    for (const auto& it : h.items()) {
        if (it.is_inline) {
            out.immediates[it.id] = it.inline_value;
        } else {
            EXPECT_EQ(it.id, 0x1000u);
            EXPECT_FALSE(it.allow_immediate);
            out.payload = it.data;
            out.payload_length = it.length;
        }
    }
    return out;
}

pmt::pmt_t rx_time(std::uint64_t secs, double frac)
{
    return pmt::make_tuple(pmt::from_uint64(secs), pmt::from_double(frac));
}

TEST(StreamToChunk, TimestampsStartAtStartTimestampAndAdvanceByStepPerRound)
{
    stream_to_chunk_config c = config();
    c.start_timestamp = 5000;
    stream_to_chunk f(c, nullptr);
    f.reset();
    std::vector<std::uint8_t> data(4096);
    for (std::uint64_t k = 0; k < 3; k++) {
        const built b = build(f, 0, data.data());
        EXPECT_EQ(b.immediates.at(0x1600), 5000 + k * 1024);
        f.next_round();
    }
}

TEST(StreamToChunk, EachHeapCarriesItsPayloadAddressedAndItsImmediatesRepeated)
{
    stream_to_chunk f(config(), nullptr);
    f.reset();
    std::vector<std::uint8_t> data(4096);
    const built b = build(f, 0, data.data());
    EXPECT_EQ(b.payload, data.data());
    EXPECT_EQ(b.payload_length, 4096u);
    EXPECT_TRUE(b.repeat);
    EXPECT_EQ(b.immediates.size(), 1u); // no substream item configured
}

TEST(StreamToChunk, SubstreamsShareARoundsTimestampAndCarryTheirInputIndex)
{
    stream_to_chunk_config c = config();
    c.substreams = 2;
    c.substream_item = 0x1601;
    c.cnt_start = 10;
    c.cnt_step = 3;
    stream_to_chunk f(c, nullptr);
    f.reset();
    std::vector<std::uint8_t> data(4096);
    std::vector<std::uint64_t> cnts;
    for (std::uint64_t k = 0; k < 2; k++) {
        for (std::size_t input = 0; input < 2; input++) {
            const built b = build(f, input, data.data());
            EXPECT_EQ(b.immediates.at(0x1600), k * 1024);
            EXPECT_EQ(b.immediates.at(0x1601), input);
            cnts.push_back(b.cnt);
        }
        f.next_round();
    }
    EXPECT_EQ(cnts, (std::vector<std::uint64_t>{ 10, 13, 16, 19 }));
}

TEST(StreamToChunk, RxTimeAtAHeapBoundaryRebasesFromThatHeap)
{
    stream_to_chunk f(timed(1e6, 1000.0), nullptr);
    f.reset();
    std::vector<std::uint8_t> data(4096);
    build(f, 0, data.data());
    f.next_round();
    f.rx_time_tag(0, rx_time(1002, 0.5)); // 2.5 s after sync at 1 MHz
    EXPECT_EQ(f.round_timestamp(), 2500000u);
    EXPECT_EQ(build(f, 0, data.data()).immediates.at(0x1600), 2500000u);
    f.next_round();
    EXPECT_EQ(build(f, 0, data.data()).immediates.at(0x1600), 2500000u + 1024);
    EXPECT_EQ(f.counters().at("rx_time_ignored"), 0u);
}

TEST(StreamToChunk, RxTimeInsideAHeapRebasesFromTheNextHeap)
{
    stream_to_chunk f(timed(1e6), nullptr);
    f.reset();
    f.rx_time_tag(24, rx_time(1, 0.0)); // item 24 is timestamp 1000000
    EXPECT_EQ(f.round_timestamp(), 0u); // this heap keeps its timestamp
    f.next_round();
    EXPECT_EQ(f.round_timestamp(), 1000000u + 1000); // item 1024 is 1000 items later
}

TEST(StreamToChunk, RxTimeScalesTheRestOfAHeapByTheStep)
{
    stream_to_chunk_config c = timed(1e6);
    c.timestamp_step = 2048; // e.g. 2 ADC samples per output item
    stream_to_chunk f(c, nullptr);
    f.reset();
    f.rx_time_tag(512, rx_time(0, 0.5));
    f.next_round();
    EXPECT_EQ(f.round_timestamp(), 500000u + 1024);
}

TEST(StreamToChunk, RxTimeWithoutASampleRateIsIgnoredAndCounted)
{
    stream_to_chunk f(config(), nullptr);
    f.reset();
    f.rx_time_tag(0, rx_time(5, 0.0));
    EXPECT_EQ(f.round_timestamp(), 0u);
    EXPECT_EQ(f.counters().at("rx_time_ignored"), 1u);
}

TEST(StreamToChunk, RxTimeThatIsNotATimeOrBeforeSyncTimeIsIgnoredAndCounted)
{
    stream_to_chunk f(timed(1e6, 100.0), nullptr);
    f.reset();
    f.rx_time_tag(0, pmt::from_double(5.0));
    f.rx_time_tag(0, rx_time(99, 0.0));
    EXPECT_EQ(f.round_timestamp(), 0u);
    EXPECT_EQ(f.counters().at("rx_time_ignored"), 2u);
}

TEST(StreamToChunk, ATimestampTooWideIsSentModuloTheImmediateAndCounted)
{
    stream_to_chunk_config c = config();
    c.start_timestamp = (std::uint64_t(1) << 40) - 1024;
    stream_to_chunk f(c, nullptr);
    f.reset();
    std::vector<std::uint8_t> data(4096);
    EXPECT_EQ(build(f, 0, data.data()).immediates.at(0x1600), c.start_timestamp);
    f.next_round();
    EXPECT_EQ(build(f, 0, data.data()).immediates.at(0x1600), 0u);
    f.next_round();
    EXPECT_EQ(build(f, 0, data.data()).immediates.at(0x1600), 1024u);
    EXPECT_EQ(f.counters().at("timestamps_wrapped"), 2u);
}

TEST(StreamToChunk, ResetStartsTheRunAgain)
{
    stream_to_chunk f(config(), nullptr);
    f.reset();
    std::vector<std::uint8_t> data(4096);
    build(f, 0, data.data());
    f.next_round();
    f.reset();
    const built b = build(f, 0, data.data());
    EXPECT_EQ(b.immediates.at(0x1600), 0u);
    EXPECT_EQ(b.cnt, 1u);
}

TEST(StreamToChunk, WrapPeriodIsTheImmediateRangeOverTheSampleRate)
{
    stream_to_chunk_config c = config();
    EXPECT_FALSE(stream_to_chunk(c, nullptr).wrap_period());
    c.sample_rate = 1.7e9;
    EXPECT_NEAR(*stream_to_chunk(c, nullptr).wrap_period(), 646.8, 0.1); // ~11 min
    c.flavour = flavour(48);
    EXPECT_NEAR(*stream_to_chunk(c, nullptr).wrap_period(), 165573.5, 0.1);
}

TEST(StreamToChunk, DescriptorsNameTheTimestampAndSubstreamAsImmediates)
{
    stream_to_chunk_config c = config();
    c.substream_item = 0x1601;
    const auto d = stream_to_chunk(c, nullptr).descriptors();
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].id, 0x1600u);
    EXPECT_EQ(d[0].name, "timestamp");
    EXPECT_EQ(d[0].format, (std::vector<std::pair<char, std::int64_t>>{ { 'u', 40 } }));
    EXPECT_TRUE(d[0].shape.empty());
    EXPECT_EQ(d[1].id, 0x1601u);
    EXPECT_EQ(d[1].name, "substream");
    c.substream_item = 0;
    EXPECT_EQ(stream_to_chunk(c, nullptr).descriptors().size(), 1u);
}

} // namespace
