/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead2-style chunk streams: the C callback placement (spead2's ABI), the declarative
// placement, the window, custom stats and chunk_ring_stream.

#include "fake_reader.h"
#include "owned_chunk.h"
#include "packet_builder.h"
#include "protocol/chunk_stream_assembler.h"
#include <gnuradio/spead/recv_chunk_stream.h>
#include <gtest/gtest.h>
#include <chrono>
#include <map>
#include <memory>
#include <vector>

using namespace gr::spead;
using namespace spead_test;

namespace {

struct user_state {
    int calls = 0;
    std::size_t seen_size = 0;
    std::size_t stat_index = 0;
};

// spead2's ABI, as a numba cfunc would be: chunk from the timestamp item (items[0]),
// extra gets the timestamp's low byte, and a custom stat counts the calls.
extern "C" void
place_by_timestamp(recv::chunk_place_data* d, std::size_t size, void* user)
{
    auto& state = *static_cast<user_state*>(user);
    state.calls++;
    state.seen_size = size;
    const std::int64_t ts = d->items[0];
    if (ts < 0)
        return;
    const std::int64_t position = ts / std::int64_t(heap_bytes);
    d->chunk_id = position / std::int64_t(heaps_per_chunk);
    d->heap_index = std::size_t(position % std::int64_t(heaps_per_chunk));
    d->heap_offset = d->heap_index * heap_bytes;
    d->extra[0] = std::uint8_t(ts);
    d->extra_offset = d->heap_index;
    d->extra_size = 1;
    d->batch_stats[state.stat_index]++;
}

std::vector<std::uint8_t>
data_heap(std::uint64_t cnt, std::uint64_t ts, std::size_t offset, std::size_t len)
{
    return packet(cnt,
                  heap_bytes,
                  offset,
                  pattern(len, std::uint8_t(cnt + offset)),
                  { { true, ts_item, ts } });
}

recv::assembler_config limits(std::size_t max_heaps, bool allow_out_of_order)
{
    recv::assembler_config out;
    out.max_heaps = max_heaps;
    out.allow_out_of_order = allow_out_of_order;
    return out;
}

struct harness {
    explicit harness(const recv::chunk_stream_config& config,
                     std::size_t max_heaps = 4,
                     bool allow_out_of_order = true)
        : assembler(
              config,
              limits(max_heaps, allow_out_of_order),
              [this](std::int64_t id, std::uint64_t*) {
                  acquired.push_back(id);
                  chunks.push_back(
                      std::make_unique<owned_chunk>(heaps_per_chunk, heap_bytes, 8));
                  chunks.back()->chunk_id = id; // the giver names the chunk
                  chunks.back()->stream_id = 7;
                  return chunks.back().get();
              },
              [this](recv::stream_chunk* c, std::uint64_t*) { ready.push_back(c); })
    {
    }
    void add(const std::vector<std::uint8_t>& p)
    {
        assembler.add_packet(p.data(), p.size());
    }
    std::map<std::string, std::uint64_t> custom()
    {
        std::vector<std::uint64_t> totals;
        assembler.merge_batch_stats(totals);
        std::map<std::string, std::uint64_t> out;
        for (std::size_t i = 0; i < totals.size(); i++)
            out[assembler.custom_stats()[i].first] = totals[i];
        return out;
    }

    chunk_stream_assembler assembler;
    std::vector<std::int64_t> acquired;
    std::vector<std::unique_ptr<owned_chunk>> chunks;
    std::vector<recv::stream_chunk*> ready;
};

recv::chunk_stream_config callback_config(user_state& state)
{
    recv::chunk_stream_config c;
    c.set_items({ ts_item });
    c.set_max_heap_extra(1);
    state.stat_index = c.add_stat("calls");
    c.set_place(recv::make_callback_placement(&place_by_timestamp, &state));
    return c;
}

} // namespace

TEST(ChunkStream, CallbackPlacesHeapsWithSpead2Abi)
{
    user_state state;
    harness h(callback_config(state));
    // heap 1 at position 1 in two packets (out of order), heap 2 at position 2
    h.add(data_heap(1, 1 * heap_bytes, 32, 32));
    h.add(data_heap(1, 1 * heap_bytes, 0, 32));
    h.add(data_heap(2, 2 * heap_bytes, 0, 64));
    h.assembler.flush();

    EXPECT_EQ(state.calls, 2); // once per heap, not per packet
    EXPECT_EQ(state.seen_size, sizeof(recv::chunk_place_data));
    ASSERT_EQ(h.ready.size(), 1u);
    auto& c = static_cast<owned_chunk&>(*h.ready[0]);
    EXPECT_EQ(c.chunk_id, 0);
    EXPECT_EQ(c.stream_id, 7u);
    EXPECT_EQ(c.flags, (std::vector<std::uint8_t>{ 0, 1, 1, 0 }));
    for (std::size_t i = 0; i < heap_bytes; i++) {
        EXPECT_EQ(c.bytes[heap_bytes + i], std::uint8_t(1 + i)) << i;
        EXPECT_EQ(c.bytes[2 * heap_bytes + i], std::uint8_t(2 + i)) << i;
    }
    EXPECT_EQ(c.extras[1], std::uint8_t(1 * heap_bytes));
    EXPECT_EQ(c.extras[2], std::uint8_t(2 * heap_bytes));
    EXPECT_EQ(h.assembler.stats()[recv_stat::heaps], 2u);
    EXPECT_EQ(h.assembler.stats()[recv_stat::packets], 3u);
    EXPECT_EQ(h.custom()["calls"], 2u);
}

TEST(ChunkStream, WindowMovesOnAndCountsTooOldAndRejected)
{
    user_state state;
    recv::chunk_stream_config config = callback_config(state);
    config.set_max_chunks(2);
    harness h(config);
    h.add(data_heap(1, 0, 0, 64));                                // chunk 0
    h.add(data_heap(2, 2 * heaps_per_chunk * heap_bytes, 0, 64)); // chunk 2: 0 leaves
    h.add(data_heap(3, 1 * heap_bytes, 0, 64));                   // chunk 0: too old
    h.add(packet(4, heap_bytes, 0, pattern(64))); // no timestamp: rejected
    ASSERT_EQ(h.ready.size(), 1u);
    EXPECT_EQ(h.ready[0]->chunk_id, 0);
    EXPECT_EQ(h.acquired, (std::vector<std::int64_t>{ 0, 1, 2 }));
    auto custom = h.custom();
    EXPECT_EQ(custom["too_old_heaps"], 1u);
    EXPECT_EQ(custom["rejected_heaps"], 1u);
    h.assembler.flush();
    EXPECT_EQ(h.ready.size(), 3u);
}

TEST(ChunkStream, PlacementOutsideItsChunkIsRejectedNotWritten)
{
    recv::declarative_placement_config d;
    d.timestamp_item = ts_item;
    d.timestamp_step = 1;
    d.heap_bytes = heap_bytes;
    d.heaps_per_chunk = heaps_per_chunk * 2; // twice what the chunks hold
    recv::chunk_stream_config config;
    config.set_place(recv::make_declarative_placement(d));
    harness h(config);
    h.add(data_heap(1, 6, 0, 64)); // index 6 of a 4-heap chunk
    EXPECT_EQ(h.custom()["rejected_heaps"], 1u);
    h.assembler.flush();
    ASSERT_EQ(h.ready.size(), 1u);
    EXPECT_EQ(static_cast<owned_chunk&>(*h.ready[0]).flags,
              (std::vector<std::uint8_t>(heaps_per_chunk, 0)));
}

TEST(ChunkStream, DeclarativePlacementBySubstream)
{
    recv::declarative_placement_config d;
    d.timestamp_item = ts_item;
    d.timestamp_step = 100;
    d.heap_bytes = heap_bytes;
    d.heaps_per_chunk = 2;
    d.substream_item = 0x1601;
    d.substreams = 2;
    d.first_substream = 5;
    EXPECT_NO_THROW(d.validate());
    auto policy = recv::make_declarative_placement(d);
    policy->bind({ 0x1601, ts_item });
    std::int64_t items[2] = { 6, 300 }; // substream 6 - 5 = 1, position 3
    recv::chunk_place_data data{};
    data.items = items;
    data.chunk_id = -1;
    policy->place(&data, sizeof(data));
    EXPECT_EQ(data.chunk_id, 1);
    EXPECT_EQ(data.heap_index, 1u * 2 + 1);
    EXPECT_EQ(data.heap_offset, 3 * heap_bytes);

    for (auto bad : { std::array<std::int64_t, 2>{ 4, 300 }, { 7, 300 }, { 5, 301 } }) {
        items[0] = bad[0];
        items[1] = bad[1];
        data.chunk_id = -1;
        policy->place(&data, sizeof(data));
        EXPECT_EQ(data.chunk_id, -1) << bad[0] << " " << bad[1];
    }
    d.timestamp_step = 0;
    EXPECT_THROW(d.validate(), std::invalid_argument);
}

TEST(ChunkStream, ConfigRefusesBadValues)
{
    recv::chunk_stream_config c;
    EXPECT_THROW(c.set_max_chunks(0), std::invalid_argument);
    EXPECT_THROW(c.enable_packet_presence(0), std::invalid_argument);
    EXPECT_EQ(c.add_stat("a"), recv::chunk_stream_config::first_custom_stat);
    EXPECT_THROW(c.add_stat("a"), std::invalid_argument);
    EXPECT_THROW(
        recv::make_callback_placement(recv::chunk_place_c_function(nullptr), nullptr),
        std::invalid_argument);
    auto ring = std::make_shared<recv::chunk_ringbuffer>(2);
    EXPECT_THROW(recv::chunk_ring_stream(recv::stream_config(), c, ring, ring),
                 std::invalid_argument); // no placement
}

TEST(ChunkStream, RingStreamHandsChunksOnAndEndsAtStopHeap)
{
    user_state state;
    auto data_ring = std::make_shared<recv::chunk_ringbuffer>(4);
    auto free_ring = std::make_shared<recv::chunk_ringbuffer>(4);
    recv::chunk_ring_stream s(
        recv::stream_config(), callback_config(state), data_ring, free_ring, 3);
    std::vector<std::unique_ptr<owned_chunk>> chunks;
    for (int i = 0; i < 4; i++) {
        chunks.push_back(std::make_unique<owned_chunk>(heaps_per_chunk, heap_bytes, 8));
        chunks.back()->flags.assign(heaps_per_chunk, 1);
        ASSERT_TRUE(s.add_free_chunk(chunks.back().get()));
        EXPECT_EQ(chunks.back()->flags[0], 0); // cleared
    }
    auto& reader = s.emplace_reader<fake_reader>();
    std::vector<std::vector<std::uint8_t>> packets;
    for (std::uint64_t k = 0; k < 2 * heaps_per_chunk; k++)
        packets.push_back(data_heap(k + 1, k * heap_bytes, 0, 64));
    packets.push_back(raw_packet({ { true, 0x01, 99 },
                                   { true, 0x02, 0 },
                                   { true, 0x03, 0 },
                                   { true, 0x04, 0 },
                                   { true, 0x06, 2 } },
                                 {}));
    reader.feed(packets);
    std::vector<std::int64_t> ids;
    std::vector<recv::stream_chunk*> used;
    for (;;) {
        recv::stream_chunk* c = nullptr;
        auto r = data_ring->pop(c, std::chrono::seconds(10));
        if (r != recv::chunk_ringbuffer::result::ok) {
            EXPECT_EQ(r, recv::chunk_ringbuffer::result::stopped);
            break;
        }
        ids.push_back(c->chunk_id);
        used.push_back(c);
        EXPECT_EQ(c->stream_id, 3u);
        auto& oc = static_cast<owned_chunk&>(*c);
        EXPECT_EQ(oc.flags, std::vector<std::uint8_t>(heaps_per_chunk, 1));
    }
    EXPECT_EQ(ids, (std::vector<std::int64_t>{ 0, 1 }));
    // The free chunk handed back last goes first (the one still in the cache).
    EXPECT_EQ(used,
              (std::vector<recv::stream_chunk*>{ chunks[3].get(), chunks[2].get() }));
    EXPECT_EQ(s.get_stats()[recv_stat::heaps], 2 * heaps_per_chunk);
    EXPECT_EQ(s.get_stats()[recv_stat::stop_heaps], 1u);
    std::map<std::string, std::uint64_t> custom;
    for (auto& kv : s.get_custom_stats())
        custom[kv.first] = kv.second;
    EXPECT_EQ(custom["calls"], 2 * heaps_per_chunk);
    EXPECT_EQ(custom["too_old_heaps"], 0u);
}

TEST(ChunkStream, StopLetsAReaderWaitingForAFreeChunkGo)
{
    user_state state;
    auto data_ring = std::make_shared<recv::chunk_ringbuffer>(1);
    auto free_ring = std::make_shared<recv::chunk_ringbuffer>(1);
    recv::chunk_ring_stream s(
        recv::stream_config(), callback_config(state), data_ring, free_ring);
    auto& reader = s.emplace_reader<fake_reader>();
    // no free chunk: the reader waits in the free ring, as spead2's does
    std::thread feeder([&] { reader.feed({ data_heap(1, 0, 0, 64) }); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto start = std::chrono::steady_clock::now();
    s.stop();
    feeder.join();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_TRUE(s.is_stopped());
}
