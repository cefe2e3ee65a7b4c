/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "general_path.h"
#include "packet_builder.h"
#include "protocol/heap_assembler.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <random>
#include <tuple>

using namespace gr::spead;
using namespace gr::spead::recv;
using spead_test::packet;
using spead_test::pattern;
using bytes = std::vector<std::uint8_t>;

namespace {

class assembler_test : public ::testing::Test
{
protected:
    void make(assembler_config config = assembler_config())
    {
        pool = detail::heap_pool::create(16);
        assembler = std::make_unique<heap_assembler>(
            config, pool, [this](heap&& h) { heaps.push_back(std::move(h)); });
    }
    void SetUp() override { make(); }

    bool add(const bytes& p) { return assembler->add_packet(p.data(), p.size()); }
    std::uint64_t stat(recv_stat s) const { return assembler->stats()[s]; }

    /*! Packets of one heap of \p size bytes cut every \p step bytes; item 0x1000 spans
     * it all. */
    static std::vector<bytes>
    heap_packets(std::uint64_t cnt, std::size_t size, std::size_t step)
    {
        const bytes payload = pattern(size, std::uint8_t(cnt));
        std::vector<bytes> out;
        for (std::size_t off = 0; off < size; off += step) {
            const std::size_t len = std::min(step, size - off);
            std::vector<spead_test::pointer> items;
            if (off == 0)
                items.push_back({ false, 0x1000, 0 });
            out.push_back(
                packet(cnt,
                       std::int64_t(size),
                       off,
                       bytes(payload.begin() + off, payload.begin() + off + len),
                       items));
        }
        return out;
    }

    static bytes payload_of(const heap& h)
    {
        return bytes(h.payload(), h.payload() + h.size());
    }

    std::shared_ptr<detail::heap_pool> pool;
    std::unique_ptr<heap_assembler> assembler;
    std::vector<heap> heaps;
};

} // namespace

TEST_F(assembler_test, assembles_packets_in_order)
{
    for (const auto& p : heap_packets(1, 1000, 100))
        add(p);
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(heaps[0].cnt(), 1u);
    EXPECT_TRUE(heaps[0].is_complete());
    EXPECT_EQ(heaps[0].size(), 1000u);
    EXPECT_EQ(heaps[0].packets(), 10u);
    EXPECT_EQ(payload_of(heaps[0]), pattern(1000, 1));
    EXPECT_EQ(stat(recv_stat::heaps), 1u);
    EXPECT_EQ(stat(recv_stat::packets), 10u);
    EXPECT_EQ(assembler->live_heaps(), 0u);
}

TEST_F(assembler_test, assembles_packets_in_reverse_order)
{
    auto packets = heap_packets(2, 1000, 64);
    std::reverse(packets.begin(), packets.end());
    for (const auto& p : packets)
        add(p);
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(payload_of(heaps[0]), pattern(1000, 2));
}

TEST_F(assembler_test, assembles_shuffled_packets)
{
    std::mt19937 rng(12345);
    for (std::uint64_t cnt = 1; cnt <= 20; cnt++) {
        auto packets = heap_packets(cnt, 5000, 97);
        std::shuffle(packets.begin(), packets.end(), rng);
        for (const auto& p : packets)
            add(p);
    }
    ASSERT_EQ(heaps.size(), 20u);
    for (std::uint64_t cnt = 1; cnt <= 20; cnt++) {
        EXPECT_EQ(heaps[cnt - 1].cnt(), cnt);
        EXPECT_EQ(payload_of(heaps[cnt - 1]), pattern(5000, std::uint8_t(cnt)));
        ASSERT_EQ(heaps[cnt - 1].items().size(), 1u);
        EXPECT_EQ(heaps[cnt - 1].items()[0].length, 5000u);
    }
    EXPECT_EQ(stat(recv_stat::packets_duplicate), 0u);
}

TEST_F(assembler_test, drops_and_counts_exact_duplicates)
{
    auto packets = heap_packets(1, 300, 100);
    add(packets[0]);
    add(packets[0]);
    add(packets[1]);
    add(packets[1]);
    add(packets[2]);
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(payload_of(heaps[0]), pattern(300, 1));
    EXPECT_EQ(heaps[0].items().size(), 1u); // the duplicate's item pointer is not added
    EXPECT_EQ(stat(recv_stat::packets_duplicate), 2u);
    EXPECT_EQ(stat(recv_stat::packets), 5u);
}

TEST_F(assembler_test, drops_duplicates_of_a_delivered_single_packet_heap)
{
    auto p = packet(9, 4, 0, pattern(4));
    add(p);
    add(p);
    add(p);
    EXPECT_EQ(heaps.size(), 1u);
    EXPECT_EQ(stat(recv_stat::packets_duplicate), 2u);
    EXPECT_EQ(stat(recv_stat::single_packet_heaps), 1u);
    EXPECT_EQ(assembler->live_heaps(), 0u);
}

TEST_F(assembler_test, rejects_partial_overlaps)
{
    const bytes data = pattern(200);
    add(packet(1, 200, 0, bytes(data.begin(), data.begin() + 100)));
    add(packet(1, 200, 50, bytes(100, 0xee))); // overlaps [50, 100)
    add(packet(1, 200, 100, bytes(data.begin() + 100, data.end())));
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(payload_of(heaps[0]), data);
    EXPECT_EQ(stat(recv_stat::packets_overlap), 1u);
}

TEST_F(assembler_test, heap_with_a_gap_is_evicted_incomplete_and_dropped_by_default)
{
    assembler_config config;
    config.max_heaps = 2;
    make(config);
    auto packets = heap_packets(1, 300, 100);
    add(packets[0]);
    add(packets[2]); // packets[1] lost
    for (std::uint64_t cnt : { 2, 3 })
        add(packet(cnt, 10, 5, pattern(5))); // incomplete too: fill the window
    EXPECT_TRUE(heaps.empty());
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_evicted), 1u); // heap 1 made room for 3
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_delivered), 0u);
    EXPECT_EQ(assembler->live_heaps(), 2u);
}

TEST_F(assembler_test, deliver_policy_zero_fills_and_reports_bytes_received)
{
    assembler_config config;
    config.max_heaps = 1;
    config.incomplete = incomplete_heaps::deliver;
    make(config);
    // Dirty a pooled buffer first so zero-filling is really tested.
    for (const auto& p : heap_packets(1, 300, 100))
        add(p);
    heaps.clear();
    auto packets = heap_packets(2, 300, 100);
    add(packets[0]);
    add(packets[2]);
    add(packet(3, 4, 0, pattern(4))); // evicts heap 2, completes at once
    ASSERT_EQ(heaps.size(), 2u);
    const heap& h = heaps[0];
    EXPECT_EQ(h.cnt(), 2u);
    EXPECT_FALSE(h.is_complete());
    EXPECT_EQ(h.received_bytes(), 200u);
    bytes expected = pattern(300, 2);
    std::fill(expected.begin() + 100, expected.begin() + 200, 0);
    EXPECT_EQ(payload_of(h), expected);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_evicted), 1u);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_delivered), 1u);
    EXPECT_EQ(stat(recv_stat::heaps), 2u); // heaps 1 and 3: incomplete ones counted apart
}

TEST_F(assembler_test,
       heap_whose_first_packet_was_lost_still_assembles_when_it_arrives_later)
{
    auto packets = heap_packets(4, 400, 100);
    for (std::size_t i = 1; i < packets.size(); i++)
        add(packets[i]);
    EXPECT_TRUE(heaps.empty());
    add(packets[0]);
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(payload_of(heaps[0]), pattern(400, 4));
    ASSERT_EQ(heaps[0].items().size(), 1u);
    EXPECT_EQ(heaps[0].items()[0].id, 0x1000u);
}

TEST_F(assembler_test,
       heap_whose_first_packet_never_arrives_is_incomplete_with_its_items_missing)
{
    assembler_config config;
    config.max_heaps = 1;
    config.incomplete = incomplete_heaps::deliver;
    make(config);
    auto packets = heap_packets(4, 400, 100);
    for (std::size_t i = 1; i < packets.size(); i++)
        add(packets[i]);
    assembler->flush();
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_FALSE(heaps[0].is_complete());
    EXPECT_EQ(heaps[0].received_bytes(), 300u);
    EXPECT_TRUE(heaps[0].items().empty());
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_flushed), 1u);
}

TEST_F(assembler_test, interleaved_heaps_assemble_independently)
{
    auto a = heap_packets(10, 500, 100), b = heap_packets(11, 500, 100),
         c = heap_packets(12, 500, 100);
    for (std::size_t i = 0; i < 5; i++) {
        add(c[4 - i]);
        add(a[i]);
        add(b[i]);
    }
    ASSERT_EQ(heaps.size(), 3u);
    EXPECT_EQ(heaps[0].cnt(),
              12u); // c arrived backwards, but its last packet came first in round 5
    for (const heap& h : heaps)
        EXPECT_EQ(payload_of(h), pattern(500, std::uint8_t(h.cnt())));
}

TEST_F(assembler_test, a_heap_leaves_once_max_heaps_newer_heaps_have_started)
{
    assembler_config config;
    config.max_heaps = 3;
    make(config);
    for (std::uint64_t cnt = 1; cnt <= 3; cnt++)
        add(heap_packets(cnt, 200, 100)[0]);
    add(heap_packets(2, 200, 100)[1]); // heap 2 completes: window has 1, 3
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_evicted), 0u);
    // Heaps 2, 3 and 4 started after heap 1: it leaves although a slot is free.
    add(heap_packets(4, 200, 100)[0]);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_evicted), 1u);
    EXPECT_EQ(assembler->live_heaps(), 2u);
    add(heap_packets(5, 200, 100)[0]); // only 4 and 5 are newer than heap 3: it stays
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_evicted), 1u);
    add(heap_packets(1, 200, 100)[1]); // late packet of the evicted heap
    EXPECT_EQ(stat(recv_stat::packets_late), 1u);
    add(heap_packets(3, 200, 100)[1]); // heap 3 survived and completes
    ASSERT_EQ(heaps.size(), 2u);
    EXPECT_EQ(heaps[0].cnt(), 2u);
    EXPECT_EQ(heaps[1].cnt(), 3u);
}

TEST_F(assembler_test, completed_heaps_advance_the_window_past_a_heap_that_lost_a_packet)
{
    // One sender, heaps in order, heap 5 loses a packet: it comes out (deliver) right
    // after heap 5 + max_heaps starts, not when max_heaps other heaps are incomplete.
    assembler_config config;
    config.max_heaps = 4;
    config.incomplete = incomplete_heaps::deliver;
    make(config);
    std::vector<std::uint64_t> order;
    for (std::uint64_t cnt = 1; cnt <= 30; cnt++) {
        auto packets = heap_packets(cnt, 300, 100);
        for (std::size_t i = 0; i < packets.size(); i++)
            if (cnt != 5 || i != 1)
                add(packets[i]);
        EXPECT_EQ(assembler->live_heaps(), cnt >= 5 && cnt < 9 ? 1u : 0u) << cnt;
    }
    for (const heap& h : heaps)
        order.push_back(h.cnt());
    std::vector<std::uint64_t> expected;
    for (std::uint64_t cnt = 1; cnt <= 30; cnt++) {
        if (cnt == 5)
            continue;
        if (cnt == 9)
            expected.push_back(5); // heap 9 is the fourth newer heap: 5 leaves first
        expected.push_back(cnt);
    }
    EXPECT_EQ(order, expected);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_evicted), 1u);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_delivered), 1u);
    EXPECT_EQ(stat(recv_stat::heaps), 29u);
}

TEST_F(assembler_test, heap_without_heap_size_is_delivered_when_retired_contiguous)
{
    add(packet(5, -1, 0, pattern(100), { { false, 0x1000, 0 } }));
    add(packet(5, -1, 100, pattern(50, 100)));
    EXPECT_TRUE(heaps.empty()); // its end is unknown until it leaves the window
    assembler->flush();
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_TRUE(heaps[0].is_complete());
    EXPECT_EQ(heaps[0].size(), 150u);
    EXPECT_EQ(payload_of(heaps[0]), pattern(150));
    EXPECT_EQ(heaps[0].items()[0].length, 150u);
    EXPECT_EQ(stat(recv_stat::heaps), 1u);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_flushed), 0u);
}

TEST_F(assembler_test, heap_without_heap_size_grows_its_buffer_up_to_the_cap)
{
    assembler_config config;
    config.max_heap_size = 10000;
    make(config);
    for (std::uint64_t off = 0; off < 9000; off += 1000)
        add(packet(5, -1, off, pattern(1000, std::uint8_t(off / 1000))));
    add(packet(5, -1, 9500, pattern(1000))); // would end at 10500 > cap
    EXPECT_EQ(stat(recv_stat::packets_heap_too_large), 1u);
    assembler->flush();
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(heaps[0].size(), 9000u);
    EXPECT_EQ(heaps[0].payload()[8999], std::uint8_t(8 + 999));
}

TEST_F(assembler_test, heap_above_max_heap_size_is_dropped_and_its_packets_counted)
{
    assembler_config config;
    config.max_heap_size = 1000;
    make(config);
    for (const auto& p : heap_packets(1, 2000, 500))
        add(p);
    for (const auto& p : heap_packets(2, 1000, 500))
        add(p);
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(heaps[0].cnt(), 2u);
    EXPECT_EQ(stat(recv_stat::heaps_too_large), 1u);
    EXPECT_EQ(stat(recv_stat::packets_heap_too_large), 4u);
    EXPECT_EQ(pool->retained() + heaps.size() + assembler->live_heaps() <= 16u, true);
}

TEST_F(assembler_test, items_keep_wire_order_and_immediates_are_right_aligned)
{
    // 64-48: 6-byte immediates
    auto p = packet(1,
                    24,
                    0,
                    pattern(24),
                    { { true, 0x2000, 0x0102 },
                      { false, 0x1001, 16 },
                      { false, 0x1000, 0 },
                      { true, 0x2001, 0xa0b0c0d0e0f0 } },
                    48);
    add(p);
    ASSERT_EQ(heaps.size(), 1u);
    const auto& items = heaps[0].items();
    ASSERT_EQ(items.size(), 4u);
    EXPECT_EQ(items[0].id, 0x2000u);
    EXPECT_TRUE(items[0].is_immediate);
    EXPECT_EQ(items[0].immediate_value, 0x0102u);
    EXPECT_EQ(bytes(items[0].data, items[0].data + items[0].length),
              (bytes{ 0, 0, 0, 0, 1, 2 }));
    EXPECT_EQ(items[1].id, 0x1001u);
    EXPECT_EQ(items[1].length, 8u); // 16 .. 24 (end of heap)
    EXPECT_EQ(items[1].data, heaps[0].payload() + 16);
    EXPECT_EQ(items[2].id, 0x1000u);
    EXPECT_EQ(items[2].length, 16u); // 0 .. 16 (next address)
    EXPECT_EQ(items[3].immediate_value, 0xa0b0c0d0e0f0u);
    EXPECT_EQ(heaps[0].get_flavour().heap_address_bits(), 48);
}

TEST_F(assembler_test,
       item_pointers_from_later_packets_follow_wire_order_whatever_the_arrival_order)
{
    auto first = packet(1, 32, 0, pattern(16), { { false, 0x1000, 0 } });
    auto second = packet(
        1, 32, 16, pattern(16, 16), { { false, 0x1001, 16 }, { true, 0x1002, 7 } });
    add(second);
    add(first);
    ASSERT_EQ(heaps.size(), 1u);
    const auto& items = heaps[0].items();
    ASSERT_EQ(items.size(), 3u);
    EXPECT_EQ(items[0].id, 0x1000u);
    EXPECT_EQ(items[1].id, 0x1001u);
    EXPECT_EQ(items[2].id, 0x1002u);
}

TEST_F(assembler_test, repeated_item_pointers_appear_once)
{
    std::vector<spead_test::pointer> items = { { false, 0x1000, 0 },
                                               { true, 0x1001, 5 } };
    add(packet(1, 32, 0, pattern(16), items));
    add(packet(1, 32, 16, pattern(16, 16), items));
    ASSERT_EQ(heaps.size(), 1u);
    ASSERT_EQ(heaps[0].items().size(), 2u);
    EXPECT_EQ(heaps[0].items()[0].length, 32u);
}

TEST_F(assembler_test, null_item_ends_the_previous_item_and_is_not_listed)
{
    add(packet(1, 8, 0, pattern(8), { { false, 0x1000, 0 }, { false, 0x0, 5 } }));
    ASSERT_EQ(heaps.size(), 1u);
    ASSERT_EQ(heaps[0].items().size(), 1u);
    EXPECT_EQ(heaps[0].items()[0].length, 5u);
}

TEST_F(assembler_test, heap_with_an_item_addressed_beyond_it_is_incomplete)
{
    // As spead2: such a heap cannot be decoded, so it never completes (dropped and
    // counted as an evicted incomplete heap), not delivered without the item.
    add(packet(1, 8, 0, pattern(8), { { false, 0x1000, 0 }, { false, 0x1001, 9 } }));
    EXPECT_TRUE(heaps.empty());
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_evicted), 1u);
    EXPECT_EQ(stat(recv_stat::heaps), 0u);
    add(packet(1, 8, 0, pattern(8), { { false, 0x1000, 0 } })); // late: its heap left
    EXPECT_EQ(stat(recv_stat::packets_late), 1u);
}

TEST_F(assembler_test, deliver_policy_hands_it_on_without_the_item)
{
    assembler_config config;
    config.incomplete = incomplete_heaps::deliver;
    make(config);
    add(packet(1, 8, 0, pattern(8), { { false, 0x1000, 0 }, { false, 0x1001, 9 } }));
    ASSERT_EQ(heaps.size(), 1u);
    ASSERT_EQ(heaps[0].items().size(), 1u);
    EXPECT_EQ(heaps[0].items()[0].id, 0x1000u);
    EXPECT_EQ(stat(recv_stat::items_bad_address), 1u);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_delivered), 1u);
}

TEST_F(assembler_test, a_stream_may_mix_flavours_per_heap)
{
    add(packet(1, 4, 0, pattern(4), { { true, 0x1000, 0x123456789a } }, 40));
    add(packet(2, 4, 0, pattern(4), { { true, 0x1000, 0x123456789abc } }, 48));
    ASSERT_EQ(heaps.size(), 2u);
    EXPECT_EQ(heaps[0].get_flavour().heap_address_bits(), 40);
    EXPECT_EQ(heaps[0].items()[0].immediate_value, 0x123456789au);
    EXPECT_EQ(heaps[1].get_flavour().heap_address_bits(), 48);
    EXPECT_EQ(heaps[1].items()[0].immediate_value, 0x123456789abcu);
}

TEST_F(assembler_test, rejects_a_packet_whose_flavour_differs_from_its_heap)
{
    add(packet(1, 8, 0, pattern(4), {}, 40));
    add(packet(1, 8, 4, pattern(4), {}, 48));
    EXPECT_EQ(stat(recv_stat::packets_flavour_mismatch), 1u);
    EXPECT_TRUE(heaps.empty());
}

TEST_F(assembler_test, rejects_a_packet_whose_heap_size_differs_from_its_heap)
{
    add(packet(1, 8, 0, pattern(4)));
    add(packet(1, 16, 4, pattern(4)));
    EXPECT_EQ(stat(recv_stat::packets_heap_size_mismatch), 1u);
    add(packet(1, 8, 4, pattern(4, 4)));
    ASSERT_EQ(heaps.size(), 1u);
}

TEST_F(assembler_test, packet_without_heap_size_is_checked_against_its_heaps_size)
{
    add(packet(1, 8, 0, pattern(4)));
    add(packet(1, -1, 6, pattern(4))); // 6 + 4 > 8
    EXPECT_EQ(stat(recv_stat::packets_heap_size_mismatch), 1u);
    EXPECT_EQ(stat(recv_stat::packets_bad_offset), 0u); // a valid packet: counted once
    EXPECT_EQ(stat(recv_stat::packets), 2u);
}

TEST_F(assembler_test, empty_packet_beyond_the_stored_bytes_then_heap_size)
{
    // The empty packet moves the extent past anything stored; adopting HEAP_SIZE later
    // must not copy from beyond the buffer (found by the fuzz target).
    add(packet(1, -1, 5000, {}));
    add(packet(1, 8000, 0, pattern(5000)));
    add(packet(1, 8000, 5000, pattern(3000, 5000 % 256)));
    EXPECT_EQ(stat(recv_stat::packets), 3u);
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(payload_of(heaps[0]), pattern(8000));
}

TEST_F(assembler_test, stop_heap_flushes_live_heaps_and_stops_the_stream)
{
    add(heap_packets(1, 200, 100)[0]);
    // false: the packet that stops the stream tells the reader to stop too
    EXPECT_FALSE(add(packet(2, 1, 0, { 0 }, { { true, 0x06, 2 }, { false, 0x0, 0 } })));
    EXPECT_TRUE(assembler->is_stopped());
    EXPECT_EQ(stat(recv_stat::stop_heaps), 1u);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_flushed), 1u);
    EXPECT_EQ(stat(recv_stat::heaps), 0u); // the stop heap is not a data heap
    EXPECT_FALSE(add(packet(3, 4, 0, pattern(4))));
    EXPECT_EQ(stat(recv_stat::packets_after_stop), 1u);
    EXPECT_TRUE(heaps.empty());
}

TEST_F(assembler_test, stop_heap_without_heap_size_stops_the_stream_when_evicted)
{
    // Without HEAP_SIZE a heap is complete only when it leaves the window; here the
    // packet that makes room for its heap evicts the stop heap, so that packet comes
    // after the stop and must not start a heap (found by the fuzz target).
    assembler_config config;
    config.max_heaps = 1;
    make(config);
    EXPECT_TRUE(add(packet(1, -1, 0, { 0 }, { { true, 0x06, 2 }, { false, 0x0, 0 } })));
    EXPECT_FALSE(assembler->is_stopped()); // complete only when evicted
    EXPECT_FALSE(add(packet(2, 4, 0, pattern(4))));
    EXPECT_TRUE(assembler->is_stopped());
    EXPECT_EQ(stat(recv_stat::stop_heaps), 1u);
    EXPECT_EQ(stat(recv_stat::packets), 1u);
    EXPECT_EQ(stat(recv_stat::packets_after_stop), 1u);
    EXPECT_EQ(assembler->live_heaps(), 0u);
    EXPECT_TRUE(heaps.empty());
}

TEST_F(assembler_test, stop_heap_can_leave_the_stream_running)
{
    assembler_config config;
    config.stop_on_stop_heap = false;
    make(config);
    add(packet(1, 4, 0, pattern(4)));
    add(packet(2, 1, 0, { 0 }, { { true, 0x06, 2 }, { false, 0x0, 0 } }));
    EXPECT_FALSE(assembler->is_stopped());
    // a restarted sender reuses cnt 1: not a duplicate after a stop
    add(packet(1, 4, 0, pattern(4)));
    EXPECT_EQ(heaps.size(), 2u);
    EXPECT_EQ(stat(recv_stat::packets_duplicate), 0u);
}

TEST_F(assembler_test, stop_heap_that_does_not_stop_leaves_other_heaps_assembling)
{
    // Two destinations into one stream: the first one's stop heap arrives while the
    // other's last heap is half received.
    assembler_config config;
    config.stop_on_stop_heap = false;
    make(config);
    const auto halves = heap_packets(5, 8, 4);
    add(halves[0]);
    add(packet(6, 1, 0, { 0 }, { { true, 0x06, 2 }, { false, 0x0, 0 } }));
    EXPECT_EQ(stat(recv_stat::stop_heaps), 1u);
    EXPECT_EQ(assembler->live_heaps(), 1u);
    add(halves[1]);
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(heaps[0].cnt(), 5u);
    EXPECT_EQ(payload_of(heaps[0]), pattern(8, 5));
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_flushed), 0u);
}

TEST_F(assembler_test, stop_delivers_complete_heaps_without_size_and_counts_the_rest)
{
    add(packet(1, -1, 0, pattern(10)));
    add(packet(2, 20, 0, pattern(10)));
    assembler->stop();
    EXPECT_TRUE(assembler->is_stopped());
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(heaps[0].cnt(), 1u);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_flushed), 1u);
}

TEST_F(assembler_test, zero_length_heap_completes_and_repeats_are_duplicates)
{
    auto p = packet(1, 0, 0, {}, { { true, 0x1000, 42 } });
    add(p);
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(heaps[0].items()[0].immediate_value, 42u);
    add(p);
    EXPECT_EQ(stat(recv_stat::packets_duplicate), 1u);
}

TEST_F(assembler_test, limits_separate_ranges_per_heap)
{
    assembler_config config;
    config.max_fragments = 3;
    make(config);
    for (std::uint64_t off : { 0, 20, 40, 60 })
        add(packet(1, 100, off, pattern(10)));
    EXPECT_EQ(stat(recv_stat::packets_over_heap_limits), 1u);
}

TEST_F(assembler_test, heaps_stat_names_the_counter_of_complete_heaps)
{
    // A continuous stream's control heaps: counted in control_heaps, not heaps.
    assembler_config config;
    config.heaps_stat = recv_stat::control_heaps;
    make(config);
    add(packet(1, 10, 0, pattern(10)));
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(stat(recv_stat::control_heaps), 1u);
    EXPECT_EQ(stat(recv_stat::heaps), 0u);
}

TEST_F(assembler_test, interleaved_heaps_are_found_by_cnt_and_counted_in_search_dist)
{
    assembler_config config;
    config.max_heaps = 4;
    make(config);
    // Four heaps of two packets each, their packets interleaved: every packet after
    // the first four goes to a heap that is not the last one hit.
    for (std::uint64_t off : { 0, 10 })
        for (std::uint64_t cnt = 1; cnt <= 4; cnt++)
            add(packet(cnt, 20, off, pattern(10)));
    EXPECT_EQ(heaps.size(), 4u);
    EXPECT_EQ(stat(recv_stat::incomplete_heaps_evicted), 0u);
    EXPECT_GE(stat(recv_stat::search_dist), 4u);
}

TEST_F(assembler_test, limits_item_pointers_per_heap)
{
    assembler_config config;
    config.max_item_pointers = 2;
    make(config);
    add(packet(1, 20, 0, pattern(10), { { true, 0x1000, 1 }, { true, 0x1001, 1 } }));
    add(packet(1, 20, 10, pattern(10), { { true, 0x1002, 1 } }));
    EXPECT_EQ(stat(recv_stat::packets_over_heap_limits), 1u);
}

TEST_F(assembler_test, storage_is_reused_from_the_pool)
{
    for (std::uint64_t cnt = 1; cnt <= 100; cnt++) {
        for (const auto& p : heap_packets(cnt, 3000, 1000))
            add(p);
        heaps.clear(); // consumer done: storage goes back
    }
    EXPECT_EQ(pool->retained(), 1u); // one storage served all 100 heaps
    EXPECT_EQ(stat(recv_stat::heaps), 100u);
}

TEST_F(assembler_test, heap_outliving_its_assembler_and_pool_is_still_valid)
{
    add(packet(1, 4, 0, pattern(4)));
    assembler.reset();
    pool.reset();
    ASSERT_EQ(heaps.size(), 1u);
    EXPECT_EQ(payload_of(heaps[0]), pattern(4));
}

TEST_F(assembler_test, config_validation_names_the_field)
{
    assembler_config config;
    config.max_heaps = 0;
    try {
        config.validate();
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("max_heaps"), std::string::npos);
    }
}

TEST_F(assembler_test, fast_paths_agree_with_the_general_path_on_damaged_streams)
{
    // add_packet skips the decoder for repeated headers and the general placement for
    // in-order packets; add_decoded does neither. On streams with packets dropped,
    // repeated, swapped, cut short and corrupted, both must count and deliver alike.
    assembler_config config;
    config.max_heaps = 2;
    config.incomplete = incomplete_heaps::deliver;
    config.stop_on_stop_heap = false;
    std::mt19937 rng(2026);
    std::uint64_t placed_packets = 0;
    for (int trial = 0; trial < 300; trial++) {
        // Three heaps; in odd trials their packets interleave (each heap's in order), as
        // from several senders.
        std::vector<std::vector<bytes>> per_heap;
        for (std::uint64_t cnt = 1; cnt <= 3; cnt++)
            per_heap.push_back(heap_packets(cnt, 1 + rng() % 3000, 64 + rng() % 512));
        std::vector<bytes> stream;
        std::vector<std::size_t> next(per_heap.size(), 0);
        std::vector<std::size_t> unfinished = { 0, 1, 2 };
        while (!unfinished.empty()) { // one packet per pass: bounded by the packets
            const std::size_t k = trial % 2 ? rng() % unfinished.size() : 0;
            const std::size_t h = unfinished[k];
            stream.push_back(per_heap[h][next[h]++]);
            if (next[h] == per_heap[h].size())
                unfinished.erase(unfinished.begin() + k);
        }
        for (std::size_t i = 0; i < stream.size(); i++) {
            switch (rng() % 16) {
            case 0:
                stream.erase(stream.begin() + i);
                break;
            case 1:
                stream.insert(stream.begin() + i, stream[i]);
                break;
            case 2:
                if (i + 1 < stream.size())
                    std::swap(stream[i], stream[i + 1]);
                break;
            case 3:
                stream[i].resize(stream[i].size() - rng() % 4);
                break;
            case 4:
                stream[i][rng() % std::min<std::size_t>(48, stream[i].size())] ^=
                    std::uint8_t(1u << (rng() % 8));
                break;
            case 5: {
                // longer, with PAYLOAD_LENGTH (4th pointer) to match: past its heap's end
                // when it is the last packet
                const std::size_t extra = 1 + rng() % 16;
                bytes& p = stream[i];
                if (p.size() >= 40 && p[39] + extra < 256) {
                    p.resize(p.size() + extra, 0xee);
                    p[39] = std::uint8_t(p[39] + extra);
                }
                break;
            }
            default:
                break;
            }
        }
        std::vector<std::tuple<std::uint64_t, bool, bytes>> fast_heaps, general_heaps;
        const auto keep = [](auto& out) {
            return [&out](heap&& h) {
                out.emplace_back(
                    h.cnt(), h.is_complete(), bytes(h.payload(), h.payload() + h.size()));
            };
        };
        heap_assembler fast(config, detail::heap_pool::create(4), keep(fast_heaps));
        heap_assembler general(config, detail::heap_pool::create(4), keep(general_heaps));
        for (const bytes& p : stream) {
            ASSERT_EQ(fast.add_packet(p.data(), p.size()),
                      spead_test::add_by_general_path(general, p.data(), p.size()));
        }
        fast.stop();
        general.stop();
        for (std::size_t i = 0; i < recv_stats::size; i++)
            ASSERT_EQ(fast.stats()[recv_stat(i)], general.stats()[recv_stat(i)])
                << stat_name(recv_stat(i)) << " in trial " << trial;
        ASSERT_EQ(fast_heaps, general_heaps) << "trial " << trial;
        placed_packets += fast.stats()[recv_stat::packets];
    }
    EXPECT_GT(placed_packets, 3000u); // the streams were mostly valid packets
}

namespace {
/*! What a heap's items must be, by the rules written out plainly: wire order, a
 * pointer seen before is dropped, an addressed item runs to the next address of any
 * other (NULL included; equal addresses by wire order) or to the heap's end, NULL and
 * out-of-bounds items are not listed. */
struct expected_item {
    std::uint64_t id;
    bool immediate;
    std::uint64_t value; // immediate: the value; addressed: the address
    std::uint64_t length;
    bool operator==(const expected_item& o) const
    {
        return std::tie(id, immediate, value, length) ==
               std::tie(o.id, o.immediate, o.value, o.length);
    }
};

std::vector<expected_item> reference_items(const std::vector<spead_test::pointer>& ptrs,
                                           std::uint64_t size)
{
    std::vector<std::size_t> unique;
    for (std::size_t i = 0; i < ptrs.size(); i++) {
        bool seen = false;
        for (std::size_t j : unique)
            seen |= std::tie(ptrs[j].immediate, ptrs[j].id, ptrs[j].value) ==
                    std::tie(ptrs[i].immediate, ptrs[i].id, ptrs[i].value);
        if (!seen)
            unique.push_back(i);
    }
    std::vector<std::pair<std::uint64_t, std::size_t>> by_address; // (address, wire)
    for (std::size_t i : unique)
        if (!ptrs[i].immediate)
            by_address.push_back({ ptrs[i].value, i });
    std::sort(by_address.begin(), by_address.end());
    std::vector<expected_item> out;
    for (std::size_t i : unique) {
        const auto& p = ptrs[i];
        if (p.immediate) {
            out.push_back({ p.id, true, p.value, 5 });
            continue;
        }
        if (p.id == 0)
            continue;
        const auto at =
            std::find(by_address.begin(), by_address.end(), std::make_pair(p.value, i));
        const std::uint64_t next = at + 1 == by_address.end() ? size : (at + 1)->first;
        out.push_back({ p.id, false, p.value, std::min(next, size) - p.value });
    }
    return out;
}
} // namespace

TEST_F(assembler_test, items_of_random_layouts_follow_the_plain_rules)
{
    // Both ways of freezing a heap (no sort for addresses in wire order without
    // repeats, sorting otherwise) against the rules: layouts in order, shuffled, with
    // repeats, NULLs, shared addresses and items at the heap's end.
    std::mt19937 rng(20261127);
    int in_order = 0;
    for (std::uint64_t cnt = 1; cnt <= 3000; cnt++) {
        const std::uint64_t size = 1 + rng() % 64;
        std::vector<spead_test::pointer> ptrs;
        const std::size_t n = rng() % 8;
        for (std::size_t k = 0; k < n; k++) {
            if (rng() % 3 == 0)
                ptrs.push_back({ true, 0x2000 + rng() % 3, rng() % 3 });
            else
                ptrs.push_back({ false,
                                 rng() % 5 == 0 ? 0 : 0x1000 + rng() % 4,
                                 rng() % (size + 1) });
        }
        if (rng() % 2) { // addresses in wire order: the no-sort shape, unless repeats
            std::vector<std::uint64_t> addresses;
            for (auto& p : ptrs)
                if (!p.immediate)
                    addresses.push_back(p.value);
            std::sort(addresses.begin(), addresses.end());
            std::size_t k = 0;
            for (auto& p : ptrs)
                if (!p.immediate)
                    p.value = addresses[k++];
            in_order++;
        }
        heaps.clear();
        add(packet(cnt, std::int64_t(size), 0, pattern(size), ptrs));
        ASSERT_EQ(heaps.size(), 1u) << "heap " << cnt;
        std::vector<expected_item> got;
        for (const item& it : heaps[0].items())
            got.push_back({ it.id,
                            it.is_immediate,
                            it.is_immediate ? it.immediate_value
                                            : std::uint64_t(it.data - heaps[0].payload()),
                            it.length });
        EXPECT_EQ(got, reference_items(ptrs, size)) << "heap " << cnt;
    }
    EXPECT_GT(in_order, 1000);
}
