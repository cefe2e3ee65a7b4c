/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead2-style chunk stream groups: members share chunks; lossy and lossless eviction.

#include "fake_reader.h"
#include "owned_chunk.h"
#include "packet_builder.h"
#include <gnuradio/spead/recv_chunk_stream_group.h>
#include <gtest/gtest.h>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

using namespace gr::spead;
using namespace spead_test;

namespace {

recv::chunk_stream_config chunk_config()
{
    recv::declarative_placement_config d;
    d.timestamp_item = ts_item;
    d.timestamp_step = 1;
    d.heap_bytes = heap_bytes;
    d.heaps_per_chunk = heaps_per_chunk;
    recv::chunk_stream_config c;
    c.set_place(recv::make_declarative_placement(d));
    return c;
}

std::vector<std::uint8_t> heap_at(std::uint64_t position)
{
    return packet(position + 1,
                  heap_bytes,
                  0,
                  pattern(heap_bytes, std::uint8_t(position)),
                  { { true, ts_item, position } });
}

/*! The heaps at positions \p first, \p first + \p step, ... before \p end. */
std::vector<std::vector<std::uint8_t>>
heaps_at(std::uint64_t first, std::uint64_t end, std::uint64_t step = 1)
{
    std::vector<std::vector<std::uint8_t>> heaps;
    for (std::uint64_t p = first; p < end; p += step)
        heaps.push_back(heap_at(p));
    return heaps;
}

std::vector<std::uint8_t> stop_heap(std::uint64_t cnt)
{
    return raw_packet({ { true, 0x01, cnt },
                        { true, 0x02, 0 },
                        { true, 0x03, 0 },
                        { true, 0x04, 0 },
                        { true, 0x06, 2 } },
                      {});
}

struct group_harness {
    explicit group_harness(recv::chunk_stream_group_config::eviction_mode mode)
        : data(std::make_shared<recv::chunk_ringbuffer>(8)),
          free(std::make_shared<recv::chunk_ringbuffer>(8)),
          group(
              recv::chunk_stream_group_config().set_max_chunks(2).set_eviction_mode(mode),
              data,
              free)
    {
        for (int i = 0; i < 8; i++) {
            chunks.push_back(std::make_unique<owned_chunk>(heaps_per_chunk, heap_bytes));
            group.add_free_chunk(chunks.back().get());
        }
        for (int m = 0; m < 2; m++)
            readers.push_back(
                &group.emplace_back(recv::stream_config(), chunk_config(), m)
                     .emplace_reader<fake_reader>());
    }
    /*! Chunk ids popped until the ring ends or \p timeout passes. */
    std::vector<std::int64_t> drain(std::chrono::seconds timeout, bool all_present = true)
    {
        std::vector<std::int64_t> ids;
        recv::stream_chunk* c = nullptr;
        while (data->pop(c, timeout) == recv::chunk_ringbuffer::result::ok) {
            ids.push_back(c->chunk_id);
            if (all_present) {
                EXPECT_EQ(static_cast<owned_chunk*>(c)->flags,
                          std::vector<std::uint8_t>(heaps_per_chunk, 1))
                    << c->chunk_id;
            }
            group.add_free_chunk(c);
        }
        return ids;
    }

    std::shared_ptr<recv::chunk_ringbuffer> data, free;
    std::vector<std::unique_ptr<owned_chunk>> chunks;
    recv::chunk_stream_ring_group group;
    std::vector<fake_reader*> readers;
};

} // namespace

TEST(ChunkStreamGroup, MembersFillSharedChunksThatLeaveInOrder)
{
    group_harness h(recv::chunk_stream_group_config::eviction_mode::lossless);
    // member 0 takes even positions, member 1 odd ones: every chunk needs both
    std::thread other([&] {
        auto odd = heaps_at(1, 6 * heaps_per_chunk, 2);
        odd.push_back(stop_heap(1000));
        h.readers[1]->feed(odd);
    });
    auto even = heaps_at(0, 6 * heaps_per_chunk, 2);
    even.push_back(stop_heap(1001));
    h.readers[0]->feed(even);
    EXPECT_EQ(h.drain(std::chrono::seconds(20)),
              (std::vector<std::int64_t>{ 0, 1, 2, 3, 4, 5 }));
    other.join();
    EXPECT_TRUE(h.data->is_stopped());
}

TEST(ChunkStreamGroup, LossyMovesAnIdleMemberOn)
{
    group_harness h(recv::chunk_stream_group_config::eviction_mode::lossy);
    // member 1 never receives anything; member 0 runs far beyond the window
    const auto all = heaps_at(0, 6 * heaps_per_chunk);
    std::thread feeder([&] { h.readers[0]->feed(all); });
    std::vector<std::int64_t> ids;
    recv::stream_chunk* c = nullptr;
    while (ids.size() < 4 && h.data->pop(c, std::chrono::seconds(20)) ==
                                 recv::chunk_ringbuffer::result::ok) {
        ids.push_back(c->chunk_id);
        h.group.add_free_chunk(c);
    }
    EXPECT_EQ(ids, (std::vector<std::int64_t>{ 0, 1, 2, 3 }));
    feeder.join();
    h.group.stop();
}

TEST(ChunkStreamGroup, LosslessWaitsForTheIdleMemberUntilStop)
{
    group_harness h(recv::chunk_stream_group_config::eviction_mode::lossless);
    const auto all = heaps_at(0, 6 * heaps_per_chunk);
    std::thread feeder([&] { h.readers[0]->feed(all); });
    recv::stream_chunk* c = nullptr;
    EXPECT_EQ(h.data->pop(c, std::chrono::milliseconds(300)),
              recv::chunk_ringbuffer::result::timeout); // member 1 holds chunk 0
    const auto start = std::chrono::steady_clock::now();
    h.group.stop();
    feeder.join();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ChunkStreamGroup, MemberWindowAboveTheGroupsIsRefused)
{
    auto ring = std::make_shared<recv::chunk_ringbuffer>(2);
    recv::chunk_stream_ring_group group(
        recv::chunk_stream_group_config().set_max_chunks(2), ring, ring);
    auto c = chunk_config();
    c.set_max_chunks(3);
    EXPECT_THROW(group.emplace_back(recv::stream_config(), c), std::invalid_argument);
    EXPECT_THROW(recv::chunk_stream_group_config().set_max_chunks(0),
                 std::invalid_argument);
}
