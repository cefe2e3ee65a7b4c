/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// source_mapping::fill(): what spead.source's work() gets from a stream in each output
// mode (heap_to_stream, chunk_to_stream), without a flowgraph: items, tags, messages,
// waiting, the end of the stream.

#include "fake_reader.h"
#include "mapping/chunk_to_stream.h"
#include "mapping/heap_to_stream.h"
#include "packet_builder.h"
#include "protocol/packetiser.h"
#include <gtest/gtest.h>
#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using spead_test::fake_reader;
using bytes = std::vector<std::uint8_t>;

/*! A single-packet heap \p cnt: one item of \p n bytes counting from \p first. */
bytes heap(std::uint64_t cnt, std::size_t n, std::uint8_t first)
{
    return spead_test::packet(
        cnt, std::int64_t(n), 0, spead_test::pattern(n, first), { { false, 0x1000, 0 } });
}

heap_to_stream_config int16_heaps(std::size_t max_items = 64)
{
    heap_to_stream_config c;
    c.type = item_type::parse("int16");
    c.max_items = max_items;
    return c;
}

/*! Output buffers for fill(). */
struct buffers {
    buffers(std::size_t outputs, std::size_t bytes) : data(outputs, bytes_t(bytes))
    {
        for (auto& d : data)
            pointers.push_back(d.data());
    }
    output_room room(std::size_t max_items,
                     std::uint64_t first_item = 0,
                     std::chrono::microseconds wait = 0us) const
    {
        return { &pointers, max_items, first_item, wait };
    }
    using bytes_t = std::vector<std::uint8_t>;
    std::vector<bytes_t> data;
    gr_vector_void_star pointers;
};

std::map<std::string, std::uint64_t> counters(const source_mapping& m)
{
    std::map<std::string, std::uint64_t> out;
    m.add_counters(out);
    return out;
}

/*! offset of each tag with key \p key, on port \p port. */
std::vector<std::uint64_t>
offsets(const source_output& out, const std::string& key, unsigned port = 0)
{
    std::vector<std::uint64_t> at;
    for (const auto& t : out.tags)
        if (t.port == port && pmt::symbol_to_string(t.tag.key) == key)
            at.push_back(t.tag.offset);
    return at;
}

// ---- heaps ---------------------------------------------------------------------------

/*! A stream fed by the test, heap_to_stream on it, one output buffer. */
struct heaps_rig {
    recv::stream s;
    fake_reader& r = s.emplace_reader<fake_reader>();
    heap_to_stream m{ int16_heaps(), nullptr };
    buffers b{ 1, 64 };
    source_output out;
    source_mapping::result fill(std::size_t max_items,
                                std::uint64_t first_item = 0,
                                std::chrono::microseconds wait = 1s)
    {
        return m.fill(s, b.room(max_items, first_item, wait), out);
    }
};

TEST(SourceMapping, HeapsFillTheRoomWithWhatIsQueuedEachHeapTaggedAtItsFirstItem)
{
    heaps_rig x;
    x.r.feed({ heap(1, 8, 0), heap(2, 12, 100) });
    const auto got = x.fill(32, 1000);
    EXPECT_EQ(got.what, source_mapping::status::filled);
    EXPECT_EQ(got.items, 10u); // 4 + 6 int16
    const bytes& o = x.b.data[0];
    EXPECT_EQ(bytes(o.begin(), o.begin() + 8), spead_test::pattern(8, 0));
    EXPECT_EQ(bytes(o.begin() + 8, o.begin() + 20), spead_test::pattern(12, 100));
    EXPECT_EQ(offsets(x.out, "packet_len"), (std::vector<std::uint64_t>{ 1000, 1004 }));
    EXPECT_EQ(counters(x.m).at("heaps_output"), 2u);
    EXPECT_EQ(counters(x.m).at("bytes_output"), 20u);
}

TEST(SourceMapping, AHeapThatDoesNotFitWaitsWholeForTheNextCall)
{
    heaps_rig x;
    x.r.feed({ heap(1, 8, 0), heap(2, 8, 50) });
    EXPECT_EQ(x.fill(6).items, 4u); // never split
    x.out.clear();
    EXPECT_EQ(x.fill(6, 4).items, 4u);
    EXPECT_EQ(bytes(x.b.data[0].begin(), x.b.data[0].begin() + 8),
              spead_test::pattern(8, 50));
    EXPECT_EQ(offsets(x.out, "heap_cnt"), (std::vector<std::uint64_t>{ 4 }));
}

TEST(SourceMapping, AHeapLargerThanTheRoomOfferedIsDroppedAndCounted)
{
    heaps_rig x;
    x.r.feed({ heap(1, 16, 0), heap(2, 4, 9) });
    EXPECT_EQ(x.fill(4).items, 2u); // heap 2 only
    EXPECT_EQ(counters(x.m).at("heaps_dropped_too_large_for_output"), 1u);
}

TEST(SourceMapping, NothingQueuedIsATimeoutAndAnEndedStreamIsStopped)
{
    heaps_rig x;
    EXPECT_EQ(x.fill(32, 0, 1ms).what, source_mapping::status::timeout);
    x.r.feed({ heap(1, 4, 0) });
    x.r.finish();
    EXPECT_EQ(x.fill(32).items, 2u); // what was queued first
    EXPECT_EQ(x.fill(32).what, source_mapping::status::stopped);
}

TEST(SourceMapping, HeapsBecomePdusOnlyWhenWanted)
{
    heaps_rig x;
    x.r.feed({ heap(1, 4, 0) });
    EXPECT_EQ(x.fill(8).items, 2u);
    EXPECT_TRUE(x.out.heaps.empty());
    x.out.want_heaps = true;
    x.r.feed({ heap(2, 4, 0) });
    EXPECT_EQ(x.fill(8, 2).items, 2u);
    EXPECT_EQ(x.out.heaps.size(), 1u);
}

// ---- continuous ----------------------------------------------------------------------

constexpr std::uint64_t timestamp_id = 0x1600;

/*! Heap \p cnt at timestamp \p k × 4 (4 int16 items). */
bytes timed_heap(std::uint64_t cnt, std::uint64_t k)
{
    return spead_test::packet(cnt,
                              8,
                              0,
                              spead_test::pattern(8, std::uint8_t(10 * k)),
                              { { true, timestamp_id, k * 4 } });
}

recv::stream_config continuous_stream()
{
    recv::continuous_config c;
    c.timestamp_item = timestamp_id;
    c.item_bytes = 2;
    c.window_heaps = 4;
    c.chunk_positions = 2;
    return recv::stream_config().set_continuous(c);
}

chunk_to_stream_config one_output()
{
    chunk_to_stream_config c;
    c.item_size = 2;
    c.rx_time = [](std::uint64_t t) { return pmt::from_uint64(t); };
    return c;
}

TEST(SourceMapping, ContinuousFillsSplitHeapsAcrossCallsAndEndsStopped)
{
    recv::stream s(continuous_stream());
    auto& r = s.emplace_reader<fake_reader>();
    for (std::uint64_t k = 0; k < 4; k++)
        r.feed({ timed_heap(k + 1, k) });
    r.finish();
    chunk_to_stream m(one_output(),
                      std::make_unique<heap_to_stream>(int16_heaps(), nullptr));
    buffers b(1, 64);
    source_output out;
    std::size_t total = 0;
    bytes seen;
    for (;;) {
        out.clear();
        const auto got = m.fill(s, b.room(3, total, 1s), out); // a heap is 4 items
        if (got.what == source_mapping::status::stopped)
            break;
        ASSERT_EQ(got.what, source_mapping::status::filled);
        seen.insert(seen.end(), b.data[0].begin(), b.data[0].begin() + 2 * got.items);
        total += got.items;
    }
    ASSERT_EQ(total, 16u);
    for (std::uint64_t k = 0; k < 4; k++)
        EXPECT_EQ(bytes(seen.begin() + 8 * k, seen.begin() + 8 * (k + 1)),
                  spead_test::pattern(8, std::uint8_t(10 * k)))
            << k;
    EXPECT_EQ(counters(m).at("bytes_output"), 32u);
    EXPECT_EQ(counters(m).at("items_zero_filled"), 0u);
}

TEST(SourceMapping, ContinuousTagsRxTimeOnTheFirstItem)
{
    recv::stream s(continuous_stream());
    auto& r = s.emplace_reader<fake_reader>();
    r.feed({ timed_heap(1, 0), timed_heap(2, 1) });
    r.finish();
    chunk_to_stream m(one_output());
    buffers b(1, 64);
    source_output out;
    EXPECT_EQ(m.fill(s, b.room(16, 500, 1s), out).items, 8u);
    EXPECT_EQ(offsets(out, "rx_time"), (std::vector<std::uint64_t>{ 500 }));
}

TEST(SourceMapping, ContinuousPassesTheHeapsBesideTheChunksToItsControlMapping)
{
    recv::stream s(continuous_stream());
    auto& r = s.emplace_reader<fake_reader>();
    // A descriptor-only heap (no timestamp): a heap beside the chunks.
    descriptor d;
    d.id = timestamp_id;
    d.name = "timestamp";
    send::heap described;
    described.add_descriptor(d);
    send::packet_generator gen(described, 99, 1472);
    bytes header(1472);
    std::vector<send::packet_piece> pieces;
    gen.next(header.data(), pieces);
    bytes packet;
    for (const auto& p : pieces)
        packet.insert(packet.end(), p.data, p.data + p.length);
    r.feed({ packet, timed_heap(1, 0) });
    r.finish();
    chunk_to_stream m(one_output(),
                      std::make_unique<heap_to_stream>(int16_heaps(), nullptr));
    buffers b(1, 64);
    source_output out;
    out.want_heaps = true;
    m.fill(s, b.room(16, 0, 1s), out);
    EXPECT_EQ(out.descriptors.size(), 1u);
    EXPECT_EQ(out.heaps.size(), 1u);
    EXPECT_EQ(counters(m).at("heaps_without_payload"), 1u);
}

} // namespace
