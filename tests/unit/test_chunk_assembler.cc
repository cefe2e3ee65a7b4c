/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "packet_builder.h"
#include "protocol/chunk_assembler.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace gr::spead;
using spead_test::packet;
using spead_test::pattern;
using bytes = std::vector<std::uint8_t>;
using fill = timeline::fill;

namespace {

constexpr std::uint64_t timestamp_id = 0x1600;
constexpr std::uint64_t substream_id = 0x4103;
constexpr std::size_t heap_bytes = 300;
constexpr std::size_t packet_bytes = 100;
constexpr std::uint64_t step = 1000;

/*! The tests' streams: timestamps \p step apart in item timestamp_id, heaps of \p bytes,
 * the substream in item substream_id when there are several. */
chunk_config config_for(std::size_t window,
                        std::size_t substreams,
                        std::size_t chunk_positions,
                        std::size_t bytes = heap_bytes)
{
    chunk_config config;
    config.timeline.timestamp_step = step;
    config.timeline.window_heaps = window;
    config.timeline.substreams = substreams;
    config.heap_bytes = bytes;
    config.timestamp_item = timestamp_id;
    config.substream_item = substreams > 1 ? substream_id : 0;
    config.chunk_positions = chunk_positions;
    return config;
}

struct out {
    std::uint64_t index;
    std::uint64_t timestamp;
    std::vector<fill> fills;
    std::vector<bytes> data;
};

class chunk_test : public ::testing::Test
{
protected:
    /*! Positions are handed on one by one (chunks of one position) unless \p
     * chunk_positions says otherwise; incomplete heaps are delivered. */
    void make(std::size_t window = 4,
              std::size_t substreams = 1,
              std::size_t chunk_positions = 1,
              recv::incomplete_heaps incomplete = recv::incomplete_heaps::deliver)
    {
        chunk_config config = config_for(window, substreams, chunk_positions);
        if (first_substream)
            config.substream_item = substream_id;
        config.first_substream = first_substream;
        config.incomplete = incomplete;
        released.clear();
        entries.clear();
        chunks_given = 0;
        chunks = std::make_unique<chunk_assembler>(
            config,
            [this, config]() -> std::unique_ptr<recv::chunk> {
                if (chunks_given >= chunks_available)
                    return nullptr;
                chunks_given++;
                return std::make_unique<recv::chunk>(
                    config.positions_per_chunk(), config.timeline.substreams, heap_bytes);
            },
            [this, substreams](recv::chunk_entry&& e) {
                entries.push_back({ e.first_index, e.positions, bool(e.data) });
                for (std::size_t p = 0; p < e.positions; p++) {
                    out o{ e.first_index + p, 0, {}, {} };
                    if (!e.data) {
                        o.fills.assign(substreams, fill::missing);
                        o.data.assign(substreams, bytes());
                        released.push_back(std::move(o));
                        continue;
                    }
                    const recv::chunk& c = *e.data;
                    o.timestamp = c.at(p).timestamp;
                    for (std::size_t s = 0; s < substreams; s++) {
                        o.fills.push_back(c.fill(p, s));
                        const std::uint8_t* at = c.data(s) + p * heap_bytes;
                        o.data.emplace_back(at, at + heap_bytes);
                    }
                    released.push_back(std::move(o));
                }
            });
    }
    void SetUp() override { make(); }

    /*! The heap of \p timestamp: its payload counts up from timestamp / step. */
    static bytes payload(std::uint64_t timestamp, std::uint64_t substream = 0)
    {
        return pattern(heap_bytes, std::uint8_t(timestamp / step + 50 * substream));
    }
    /*! Packet \p i (of 3) of the heap with \p cnt and \p timestamp. */
    static bytes heap_packet(std::uint64_t cnt,
                             std::uint64_t timestamp,
                             std::size_t i,
                             std::int64_t substream = -1)
    {
        const bytes whole = payload(timestamp, substream < 0 ? 0 : substream);
        std::vector<spead_test::pointer> items{ { true, timestamp_id, timestamp } };
        if (substream >= 0)
            items.push_back({ true, substream_id, std::uint64_t(substream) });
        const auto first = whole.begin() + std::ptrdiff_t(i * packet_bytes);
        return packet(
            cnt, heap_bytes, i * packet_bytes, bytes(first, first + packet_bytes), items);
    }
    chunk_assembler::result add(const bytes& p)
    {
        packet_header h;
        EXPECT_EQ(decode_packet(p.data(), p.size(), h), decode_result::ok);
        return chunks->add_packet(h);
    }
    /*! Every packet of a heap, in order, but those in \p skip. */
    void heap(std::uint64_t cnt,
              std::uint64_t timestamp,
              std::vector<std::size_t> skip = {},
              std::int64_t substream = -1)
    {
        for (std::size_t i = 0; i < heap_bytes / packet_bytes; i++)
            if (std::find(skip.begin(), skip.end(), i) == skip.end())
                add(heap_packet(cnt, timestamp, i, substream));
    }
    std::uint64_t stat(recv_stat s) const { return chunks->stats()[s]; }

    struct entry {
        std::uint64_t first_index;
        std::size_t positions;
        bool has_data;
    };
    std::unique_ptr<chunk_assembler> chunks;
    std::vector<out> released;
    std::vector<entry> entries;
    std::size_t chunks_available = 1000000; //!< acquire() returns null past this
    std::uint64_t first_substream = 0;      //!< make() takes substreams from this
    std::size_t chunks_given = 0;
};

} // namespace

TEST_F(chunk_test, packets_are_copied_to_their_positions_and_released_in_order)
{
    heap(7, 5000);
    heap(8, 6000);
    ASSERT_EQ(released.size(), 2u);
    EXPECT_EQ(released[0].timestamp, 5000u);
    EXPECT_EQ(released[0].fills, std::vector<fill>{ fill::complete });
    EXPECT_EQ(released[0].data[0], payload(5000));
    EXPECT_EQ(released[1].data[0], payload(6000));
    EXPECT_EQ(stat(recv_stat::packets), 6u);
    EXPECT_EQ(stat(recv_stat::bytes_zero_filled), 0u);
    EXPECT_EQ(stat(recv_stat::heaps), 2u);
}

TEST_F(chunk_test, packets_and_heaps_out_of_order_land_in_place)
{
    add(heap_packet(1, 0, 1)); // the first heap seen defines timestamp 0
    add(heap_packet(2, 1000, 2));
    add(heap_packet(2, 1000, 0));
    add(heap_packet(1, 0, 2));
    add(heap_packet(2, 1000, 1));
    EXPECT_TRUE(released.empty()); // position 0 not complete yet
    add(heap_packet(1, 0, 0));
    ASSERT_EQ(released.size(), 2u);
    EXPECT_EQ(released[0].data[0], payload(0));
    EXPECT_EQ(released[1].data[0], payload(1000));
}

TEST_F(chunk_test, later_packets_of_a_heap_are_found_by_cnt_without_the_items)
{
    // A sender that puts the items in each heap's first packet only, three heaps
    // interleaved packet by packet, with heap cnts that hash near each other.
    make(8, 1);
    const auto bare = [](std::uint64_t cnt, std::uint64_t timestamp, std::size_t i) {
        const bytes whole = payload(timestamp);
        const auto first = whole.begin() + std::ptrdiff_t(i * packet_bytes);
        return packet(
            cnt, heap_bytes, i * packet_bytes, bytes(first, first + packet_bytes));
    };
    for (std::uint64_t round = 0; round < 20; round++) {
        for (std::size_t i = 0; i < 3; i++)
            for (std::uint64_t h = 0; h < 3; h++) {
                const std::uint64_t k = 3 * round + h;
                const std::uint64_t cnt = (k + 1) << 32;
                EXPECT_EQ(
                    add(i == 0 ? heap_packet(cnt, k * step, 0) : bare(cnt, k * step, i)),
                    chunk_assembler::result::placed)
                    << "heap " << k << " packet " << i;
            }
    }
    ASSERT_EQ(released.size(), 60u);
    for (std::size_t k = 0; k < released.size(); k++)
        EXPECT_EQ(released[k].data[0], payload(k * step)) << k;
    EXPECT_EQ(stat(recv_stat::packets), 180u);
    EXPECT_EQ(add(bare(999, 0, 1)), chunk_assembler::result::other); // unknown cnt
}

TEST_F(chunk_test, a_packet_without_the_timestamp_item_is_left_to_the_caller)
{
    const bytes descriptor_heap = packet(99, 8, 0, pattern(8), { { false, 0x05, 0 } });
    EXPECT_EQ(add(descriptor_heap), chunk_assembler::result::other);
    EXPECT_EQ(stat(recv_stat::packets) + stat(recv_stat::packets_refused_heap), 0u);
}

TEST_F(chunk_test, a_lost_packet_leaves_zeros_in_its_place_only)
{
    for (std::uint64_t t = 0; t <= 3000; t += 1000)
        heap(t / 1000 + 1, t); // every slot of the window dirty
    heap(5, 4000, { 1 });      // slot 0 again, its middle packet lost
    for (std::uint64_t t = 5000; t <= 8000; t += 1000)
        heap(t / 1000 + 1, t);
    ASSERT_GE(released.size(), 5u);
    const out& o = released[4];
    EXPECT_EQ(o.timestamp, 4000u);
    EXPECT_EQ(o.fills, std::vector<fill>{ fill::incomplete });
    bytes expected = payload(4000);
    std::fill(expected.begin() + 100, expected.begin() + 200, 0);
    EXPECT_EQ(o.data[0], expected);
    EXPECT_EQ(stat(recv_stat::bytes_zero_filled), 100u);
}

TEST_F(chunk_test, a_lost_heap_is_all_zeros)
{
    heap(1, 0);
    heap(2, 1000);
    // the heap at 2000 is lost
    for (std::uint64_t t = 3000; t <= 6000; t += 1000)
        heap(t / 1000 + 1, t);
    ASSERT_GE(released.size(), 3u);
    EXPECT_EQ(released[2].fills, std::vector<fill>{ fill::missing });
    EXPECT_EQ(released[2].data[0], bytes(heap_bytes, 0));
    EXPECT_EQ(released[3].data[0], payload(3000));
    EXPECT_EQ(stat(recv_stat::bytes_zero_filled), heap_bytes);
    EXPECT_EQ(stat(recv_stat::heaps_missing), 1u);
}

TEST_F(chunk_test, each_late_or_repeated_packet_is_counted_once_and_its_heap_once)
{
    heap(1, 0);
    add(heap_packet(1, 0, 1)); // the heap left: a late packet
    EXPECT_EQ(stat(recv_stat::packets_late), 1u);
    heap(2, 1000, { 2 });
    add(heap_packet(2, 1000, 0)); // still live: a repeated packet
    EXPECT_EQ(stat(recv_stat::packets_duplicate), 1u);
    heap(3, 5000); // releases 1000 (incomplete) and the missing 2000..
    heap(9, 1000); // a heap for a position already output: three packets, one heap
    EXPECT_EQ(stat(recv_stat::packets_refused_heap), 3u);
    EXPECT_EQ(stat(recv_stat::heaps_late), 1u);
    add(heap_packet(2, 1000, 2)); // the rest of a heap released incomplete
    EXPECT_EQ(stat(recv_stat::packets_late), 2u);
}

TEST_F(chunk_test, a_heap_of_another_size_is_refused)
{
    const bytes wrong = packet(4, 200, 0, pattern(100), { { true, timestamp_id, 0 } });
    EXPECT_EQ(add(wrong), chunk_assembler::result::refused);
    EXPECT_EQ(stat(recv_stat::heaps_wrong_size), 1u);
    EXPECT_EQ(stat(recv_stat::packets_refused_heap), 1u);
    EXPECT_EQ(stat(recv_stat::packets), 0u);
}

TEST_F(chunk_test, substreams_fill_their_own_spans)
{
    make(4, 2);
    heap(1, 0, {}, 0);
    heap(2, 0, {}, 1);
    heap(3, 1000, {}, 1); // substream 0 loses the heap at 1000
    heap(4, 2000, {}, 0);
    heap(5, 2000, {}, 1);
    chunks->flush();
    ASSERT_EQ(released.size(), 3u);
    EXPECT_EQ(released[0].data[0], payload(0, 0));
    EXPECT_EQ(released[0].data[1], payload(0, 1));
    EXPECT_EQ(released[1].fills, (std::vector<fill>{ fill::missing, fill::complete }));
    EXPECT_EQ(released[1].data[0], bytes(heap_bytes, 0));
    EXPECT_EQ(released[1].data[1], payload(1000, 1));
    EXPECT_EQ(released[2].data[0], payload(2000, 0));
    const bytes no_substream = heap_packet(6, 3000, 0);
    EXPECT_EQ(add(no_substream), chunk_assembler::result::refused);
    EXPECT_EQ(stat(recv_stat::heaps_bad_substream), 1u);
    EXPECT_EQ(add(heap_packet(6, 3000, 1)), chunk_assembler::result::refused);
    EXPECT_EQ(stat(recv_stat::heaps_bad_substream), 1u); // one heap
    EXPECT_EQ(stat(recv_stat::packets_refused_heap), 2u);
}

TEST_F(chunk_test, a_host_takes_its_substreams_and_counts_the_others_apart)
{
    first_substream = 4; // this host takes substreams 4 and 5 of a sender's 8
    make(4, 2);
    std::uint64_t cnt = 1;
    for (std::uint64_t t = 0; t < 3000; t += 1000)
        for (std::int64_t s = 0; s < 8; s++)
            heap(cnt++, t, {}, s);
    chunks->flush();
    ASSERT_EQ(released.size(), 3u);
    for (std::uint64_t p = 0; p < 3; p++) {
        EXPECT_EQ(released[p].fills,
                  (std::vector<fill>{ fill::complete, fill::complete }));
        EXPECT_EQ(released[p].data[0], payload(p * 1000, 4)) << p; // output 0: 4
        EXPECT_EQ(released[p].data[1], payload(p * 1000, 5)) << p; // output 1: 5
    }
    EXPECT_EQ(stat(recv_stat::heaps), 6u);
    EXPECT_EQ(stat(recv_stat::heaps_other_substream), 18u); // once per heap
    EXPECT_EQ(stat(recv_stat::heaps_bad_substream), 0u);    // not malformed
    // Each packet of another host's heap is refused: 3 packets each.
    EXPECT_EQ(stat(recv_stat::packets_refused_heap), 18u * 3);
    EXPECT_EQ(stat(recv_stat::packets), 6u * 3);
    // A heap without the substream item is still malformed, not another host's.
    EXPECT_EQ(add(heap_packet(cnt, 3000, 0)), chunk_assembler::result::refused);
    EXPECT_EQ(stat(recv_stat::heaps_bad_substream), 1u);
    EXPECT_EQ(stat(recv_stat::heaps_other_substream), 18u);
}

TEST_F(chunk_test, substreams_beyond_the_last_output_are_other_hosts_too)
{
    make(4, 2); // first_substream 0: takes 0 and 1
    heap(1, 0, {}, 0);
    heap(2, 0, {}, 1);
    heap(3, 0, {}, 2);
    EXPECT_EQ(stat(recv_stat::heaps_other_substream), 1u);
    EXPECT_EQ(stat(recv_stat::heaps_bad_substream), 0u);
    EXPECT_EQ(stat(recv_stat::heaps), 2u);
}

TEST_F(chunk_test, a_restarted_sender_reusing_heap_cnts_is_placed_again)
{
    heap(1, 500000);
    heap(2, 501000);
    heap(1, 0); // counter and cnts restarted: a new epoch, not a late heap
    heap(2, 1000);
    ASSERT_EQ(released.size(), 4u);
    EXPECT_EQ(released[2].timestamp, 0u);
    EXPECT_EQ(released[3].data[0], payload(1000));
    EXPECT_EQ(stat(recv_stat::timestamp_resyncs), 1u);
    EXPECT_EQ(stat(recv_stat::packets_late) + stat(recv_stat::packets_refused_heap), 0u);
}

TEST_F(chunk_test, every_packet_ends_in_one_counter_and_every_byte_is_right)
{
    for (unsigned seed = 1; seed <= 20; seed++) {
        make(8, 1);
        std::mt19937 rng(seed);
        std::vector<bytes> wire;
        std::vector<std::pair<std::uint64_t, std::size_t>> ids; // timestamp, packet
        for (std::uint64_t k = 0; k < 300; k++)
            for (std::size_t i = 0; i < 3; i++) {
                wire.push_back(heap_packet(k + 1, k * step, i));
                ids.emplace_back(k * step, i);
            }
        // The first packet stays first (it defines timestamp 0); later ones move a
        // little, some are lost, some repeated.
        for (std::size_t i = 1; i + 1 < wire.size(); i++)
            if (rng() % 4 == 0) {
                const std::size_t j = std::min(wire.size() - 1, i + 1 + rng() % 8);
                std::swap(wire[i], wire[j]);
                std::swap(ids[i], ids[j]);
            }
        std::uint64_t given = 0;
        std::vector<std::vector<bool>> got(300, std::vector<bool>(3, false));
        for (std::size_t i = 0; i < wire.size(); i++) {
            const unsigned r = i == 0 ? 50 : rng() % 100;
            if (r < 4)
                continue; // lost
            given++;
            if (add(wire[i]) == chunk_assembler::result::placed)
                got[ids[i].first / step][ids[i].second] = true;
            if (r >= 97) {
                given++;
                add(wire[i]);
            }
        }
        chunks->flush();
        const recv_stats st = chunks->stats();
        EXPECT_EQ(st[recv_stat::packets] + st[recv_stat::packets_refused_heap] +
                      st[recv_stat::packets_late] + st[recv_stat::packets_duplicate] +
                      st[recv_stat::packets_overlap] +
                      st[recv_stat::packets_heap_size_mismatch] +
                      st[recv_stat::packets_over_heap_limits] +
                      st[recv_stat::packets_dropped_queue_full],
                  given)
            << "seed " << seed;
        // Each position is a complete heap, an incomplete one (delivered) or missing.
        EXPECT_EQ(st[recv_stat::heaps] + st[recv_stat::incomplete_heaps_delivered] +
                      st[recv_stat::heaps_missing],
                  st[recv_stat::positions_released])
            << "seed " << seed;
        ASSERT_EQ(released.size(), 300u) << "seed " << seed;
        for (std::size_t k = 0; k < released.size(); k++) {
            bytes expected = payload(k * step);
            for (std::size_t i = 0; i < 3; i++)
                if (!got[k][i])
                    std::fill(expected.begin() + std::ptrdiff_t(i * packet_bytes),
                              expected.begin() + std::ptrdiff_t((i + 1) * packet_bytes),
                              0);
            EXPECT_EQ(released[k].data[0], expected) << "seed " << seed << " heap " << k;
            const bool whole = got[k][0] && got[k][1] && got[k][2];
            EXPECT_EQ(released[k].fills[0] == fill::complete, whole);
        }
        EXPECT_GT(st[recv_stat::packets_duplicate], 0u);
        EXPECT_GT(st[recv_stat::bytes_zero_filled], 0u);
    }
}

TEST_F(chunk_test, a_chunk_goes_to_the_consumer_when_its_last_position_is_released)
{
    make(4, 1, 2);
    heap(1, 0);
    EXPECT_TRUE(entries.empty());
    heap(2, 1000);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].first_index, 0u);
    EXPECT_EQ(entries[0].positions, 2u);
    heap(3, 2000);
    chunks->flush(); // the end of the stream hands on the part-filled chunk
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[1].first_index, 2u);
    EXPECT_EQ(entries[1].positions, 1u);
    ASSERT_EQ(released.size(), 3u);
    for (std::size_t k = 0; k < 3; k++)
        EXPECT_EQ(released[k].data[0], payload(k * step)) << k;
}

TEST_F(chunk_test, each_substream_is_one_contiguous_span_of_the_chunk)
{
    make(4, 2, 2);
    std::vector<std::unique_ptr<recv::chunk>> kept;
    chunk_assembler a(
        config_for(4, 2, 2),
        [] { return std::make_unique<recv::chunk>(2, 2, heap_bytes); },
        [&](recv::chunk_entry&& e) { kept.push_back(std::move(e.data)); });
    for (std::uint64_t k = 0; k < 2; k++)
        for (std::int64_t s = 0; s < 2; s++)
            for (std::size_t i = 0; i < 3; i++) {
                const bytes p =
                    heap_packet(10 * k + std::uint64_t(s) + 1, k * step, i, s);
                packet_header h;
                ASSERT_EQ(decode_packet(p.data(), p.size(), h), decode_result::ok);
                a.add_packet(h);
            }
    ASSERT_EQ(kept.size(), 1u);
    for (std::size_t s = 0; s < 2; s++) {
        bytes expected = payload(0, s);
        const bytes second = payload(step, s);
        expected.insert(expected.end(), second.begin(), second.end());
        EXPECT_EQ(bytes(kept[0]->data(s), kept[0]->data(s) + 2 * heap_bytes), expected);
    }
}

TEST_F(chunk_test, the_drop_policy_outputs_an_incomplete_heap_as_zeros)
{
    make(4, 1, 1, recv::incomplete_heaps::drop);
    heap(1, 0, { 1 });
    heap(2, 1000);
    chunks->flush();
    ASSERT_EQ(released.size(), 2u);
    EXPECT_EQ(released[0].fills, std::vector<fill>{ fill::missing });
    EXPECT_EQ(released[0].data[0], bytes(heap_bytes, 0));
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_flushed), 1u);
    EXPECT_EQ(stat(recv_stat::heaps_missing), 1u);
    EXPECT_EQ(stat(recv_stat::bytes_zero_filled), heap_bytes);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_delivered), 0u);
    EXPECT_EQ(stat(recv_stat::heaps), 1u);
}

TEST_F(chunk_test, an_incomplete_heap_pushed_out_by_the_window_is_evicted)
{
    make(2, 1, 1, recv::incomplete_heaps::drop);
    heap(1, 0, { 2 });
    heap(2, 1000);
    heap(3, 2000); // position 0 leaves the window incomplete
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_evicted), 1u);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_flushed), 0u);
}

TEST_F(chunk_test, without_a_free_chunk_its_positions_are_lost_counted_and_still_output)
{
    chunks_available = 1;
    make(4, 1, 2);
    heap(1, 0);
    heap(2, 1000); // the first chunk goes
    heap(3, 2000); // no chunk for positions 2 and 3
    heap(4, 3000);
    chunks_available = 2;
    heap(5, 4000);
    chunks->flush();
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_TRUE(entries[0].has_data);
    EXPECT_FALSE(entries[1].has_data);
    EXPECT_EQ(entries[1].first_index, 2u);
    EXPECT_EQ(entries[1].positions, 2u);
    EXPECT_TRUE(entries[2].has_data);
    ASSERT_EQ(released.size(), 5u);
    EXPECT_EQ(released[4].data[0], payload(4000));
    EXPECT_EQ(stat(recv_stat::packets_dropped_queue_full), 6u);
    EXPECT_EQ(stat(recv_stat::heaps_dropped_queue_full), 2u);
    EXPECT_EQ(stat(recv_stat::heaps), 3u);
    EXPECT_EQ(stat(recv_stat::packets), 9u);
    EXPECT_EQ(stat(recv_stat::positions_released), 5u);
}

namespace {

/*! One chunk_assembler and everything it released, position by position: index,
 * timestamp, discontinuity, and per substream the fill and the bytes. */
struct placed_record {
    using position =
        std::tuple<std::uint64_t, std::uint64_t, bool, std::vector<fill>, bytes>;
    explicit placed_record(const chunk_config& config)
        : assembler(
              config,
              [config] {
                  return std::make_unique<recv::chunk>(config.positions_per_chunk(),
                                                       config.timeline.substreams,
                                                       config.heap_bytes);
              },
              [this, config](recv::chunk_entry&& e) {
                  for (std::size_t p = 0; e.data && p < e.positions; p++) {
                      std::vector<fill> fills;
                      bytes data;
                      for (std::size_t s = 0; s < config.timeline.substreams; s++) {
                          fills.push_back(e.data->fill(p, s));
                          const std::uint8_t* at =
                              e.data->data(s) + p * config.heap_bytes;
                          data.insert(data.end(), at, at + config.heap_bytes);
                      }
                      out.emplace_back(e.first_index + p,
                                       e.data->at(p).timestamp,
                                       e.data->at(p).discontinuity,
                                       fills,
                                       data);
                  }
              })
    {
    }
    chunk_assembler assembler;
    std::vector<position> out;
};

/*! \p stream placed as chunk_placement places a batch with several readers: batches
 * of 8, decoded, reserve()d with extend() joining runs to one ticket, then copied and
 * committed (early where reserve() says drain); \p extended counts the packets
 * extend() took. */
void place_in_batches(chunk_assembler& a,
                      const std::vector<bytes>& stream,
                      std::uint64_t& extended,
                      bool extend = true)
{
    constexpr std::size_t batch = 8;
    std::vector<packet_header> h(batch);
    std::vector<decode_result> r(batch);
    std::vector<std::pair<chunk_assembler::copy_ticket, std::size_t>> copies;
    const auto copy_and_commit = [&] {
        for (const auto& [t, first] : copies)
            for (std::size_t k = first; k < first + t.packets; k++)
                std::memcpy(t.to + (h[k].payload_offset - h[first].payload_offset),
                            h[k].payload,
                            std::size_t(h[k].payload_length));
        for (const auto& c : copies)
            a.commit(c.first);
        copies.clear();
    };
    for (std::size_t at = 0; at < stream.size(); at += batch) {
        const std::size_t n = std::min(batch, stream.size() - at);
        for (std::size_t k = 0; k < n; k++)
            r[k] = decode_packet(stream[at + k].data(), stream[at + k].size(), h[k]);
        for (std::size_t i = 0; i < n; i++) {
            if (r[i] != decode_result::ok)
                continue;
            chunk_assembler::copy_ticket t;
            chunk_assembler::result placed = a.reserve(h[i], t);
            if (placed == chunk_assembler::result::drain) {
                copy_and_commit();
                placed = a.reserve(h[i], t);
            }
            if (placed != chunk_assembler::result::copy)
                continue;
            copies.emplace_back(t, i);
            std::size_t more = 0;
            while (extend && i + more + 1 < n && r[i + more + 1] == decode_result::ok &&
                   chunk_assembler::continues(h[i + more], h[i + more + 1]))
                more++;
            if (more != 0 && a.extend(copies.back().first, &h[i + 1], more)) {
                i += more;
                extended += more;
            }
        }
        copy_and_commit();
    }
}

} // namespace

TEST(chunk_assembler_repeat, agrees_with_decoding_every_packet_on_damaged_streams)
{
    // add_repeat() places a heap's later packets without decoding them; decoding every
    // packet and add_packet() must count and output exactly the same (and extend(),
    // which reserves them in the ticket of the packet before, exactly what reserve()
    // of each alone does: a heap completes at commit, so those two differ from
    // add_packet() in when a duplicate is late), on streams with
    // packets dropped, repeated, swapped, cut short, corrupted, lengthened, and giving
    // another heap size, from two substreams whose heaps interleave.
    chunk_config config = config_for(4, 2, 2, 2048);
    config.incomplete = recv::incomplete_heaps::deliver;
    std::mt19937 rng(2611);
    std::uint64_t repeats = 0, packets = 0, extended = 0;
    for (int trial = 0; trial < 200; trial++) {
        // Per substream a run of heaps in order; the two runs interleave packet by packet
        // in odd trials. The first packet of each heap carries the items, the rest only
        // the four specials, as spead2 sends them.
        std::vector<std::vector<bytes>> runs(2);
        std::uint64_t cnt = 1;
        for (std::uint64_t k = 0; k < 12; k++) {
            for (std::uint64_t s = 0; s < 2; s++, cnt++) {
                const std::uint64_t timestamp =
                    (k + (rng() % 16 == 0 ? 9 : 0)) * step; // now and then far ahead
                const bytes whole = pattern(config.heap_bytes, std::uint8_t(cnt));
                const std::size_t piece = 64 + rng() % 700;
                for (std::size_t at = 0; at < whole.size(); at += piece) {
                    const std::size_t n = std::min(piece, whole.size() - at);
                    std::vector<spead_test::pointer> items;
                    if (at == 0)
                        items = { { true, timestamp_id, timestamp },
                                  { true, substream_id, s } };
                    runs[s].push_back(
                        packet(cnt,
                               std::int64_t(config.heap_bytes),
                               at,
                               bytes(whole.begin() + std::ptrdiff_t(at),
                                     whole.begin() + std::ptrdiff_t(at + n)),
                               items));
                }
            }
        }
        std::vector<bytes> stream;
        std::size_t next[2] = { 0, 0 };
        while (next[0] < runs[0].size() || next[1] < runs[1].size()) {
            std::size_t s = next[0] < runs[0].size() ? 0 : 1;
            if (trial % 2 && next[1] < runs[1].size() && (rng() % 2 || s == 1))
                s = 1;
            stream.push_back(runs[s][next[s]++]);
        }
        for (std::size_t i = 0; i < stream.size(); i++) {
            bytes& p = stream[i];
            switch (rng() % 20) {
            case 0:
                stream.erase(stream.begin() + std::ptrdiff_t(i));
                break;
            case 1:
                stream.insert(stream.begin() + std::ptrdiff_t(i), bytes(p));
                break;
            case 2:
                if (i + 1 < stream.size())
                    std::swap(p, stream[i + 1]);
                break;
            case 3:
                p.resize(p.size() - rng() % 4);
                break;
            case 4:
                p[rng() % std::min<std::size_t>(48, p.size())] ^=
                    std::uint8_t(1u << (rng() % 8));
                break;
            case 5: {
                // longer, PAYLOAD_LENGTH (4th pointer, low byte at 39) to match: past
                // the heap's end when it is the heap's last packet
                const std::size_t extra = 1 + rng() % 16;
                if (p[39] + extra < 256) {
                    p.resize(p.size() + extra, 0xee);
                    p[39] = std::uint8_t(p[39] + extra);
                }
                break;
            }
            case 6:
                p[22] ^= 0x10; // HEAP_SIZE (2nd pointer) says 4096 bytes more
                break;
            default:
                break;
            }
        }

        placed_record fast(config), general(config);
        for (const bytes& p : stream) {
            packet_header h;
            const decode_result r = decode_packet(p.data(), p.size(), h);
            if (fast.assembler.add_repeat(p.data(), p.size())) {
                repeats++;
                ASSERT_EQ(r, decode_result::ok) << "trial " << trial;
            } else if (r == decode_result::ok) {
                fast.assembler.add_packet(h);
            }
            if (r == decode_result::ok)
                general.assembler.add_packet(h);
        }
        placed_record batched(config), reserved(config);
        place_in_batches(batched.assembler, stream, extended);
        std::uint64_t none = 0;
        place_in_batches(reserved.assembler, stream, none, false);
        fast.assembler.flush();
        general.assembler.flush();
        batched.assembler.flush();
        reserved.assembler.flush();
        for (std::size_t i = 0; i < recv_stats::size; i++) {
            ASSERT_EQ(fast.assembler.stats()[recv_stat(i)],
                      general.assembler.stats()[recv_stat(i)])
                << stat_name(recv_stat(i)) << " in trial " << trial;
            ASSERT_EQ(batched.assembler.stats()[recv_stat(i)],
                      reserved.assembler.stats()[recv_stat(i)])
                << stat_name(recv_stat(i)) << " (extend) in trial " << trial;
        }
        ASSERT_EQ(fast.out, general.out) << "trial " << trial;
        ASSERT_EQ(batched.out, reserved.out) << "(extend) trial " << trial;
        packets += general.assembler.stats()[recv_stat::packets];
    }
    // The streams were mostly placed, and mostly by the fast path.
    EXPECT_GT(packets, 20000u);
    EXPECT_GT(repeats, packets / 3);
    EXPECT_GT(extended, packets / 3);
}

TEST_F(chunk_test, add_repeat_takes_only_the_next_piece_of_a_learnt_heap)
{
    const bytes whole = payload(0);
    const auto piece = [&](std::size_t i, std::int64_t size = heap_bytes) {
        const auto first = whole.begin() + std::ptrdiff_t(i * packet_bytes);
        return packet(1, size, i * packet_bytes, bytes(first, first + packet_bytes));
    };
    // Nothing learnt yet; then the first packet (with the timestamp item) teaches
    // nothing, since its layout is not the four specials alone.
    EXPECT_FALSE(chunks->add_repeat(piece(1).data(), piece(1).size()));
    add(heap_packet(1, 0, 0));
    EXPECT_FALSE(chunks->add_repeat(piece(1).data(), piece(1).size()));
    EXPECT_EQ(add(piece(1)), chunk_assembler::result::placed); // learnt from this one
    EXPECT_FALSE(chunks->add_repeat(piece(1).data(), piece(1).size())); // a duplicate
    const bytes other_size = piece(2, heap_bytes + 100);
    EXPECT_FALSE(chunks->add_repeat(other_size.data(), other_size.size()));
    EXPECT_TRUE(chunks->add_repeat(piece(2).data(), piece(2).size()));
    // The heap is complete and released: its layout is forgotten.
    EXPECT_FALSE(chunks->add_repeat(piece(2).data(), piece(2).size()));
    chunks->flush();
    ASSERT_EQ(released.size(), 1u);
    EXPECT_EQ(released[0].data[0], whole);
    EXPECT_EQ(stat(recv_stat::packets), 3u);
    EXPECT_EQ(stat(recv_stat::packets_duplicate), 0u); // add_repeat() counted nothing
}
