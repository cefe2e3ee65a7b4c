/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead2's stream modes, as recv::stream_config sets them: substreams (windows of
// live heaps by cnt), heaps in order only, sized heaps only, non-temporal copies, the
// memory allocator, and explicit start.

#include "packet_builder.h"
#include "protocol/heap_assembler.h"
#include "protocol/payload_copy.h"
#include <gnuradio/spead/memory_allocator.h>
#include <gnuradio/spead/recv_buffer.h>
#include <gnuradio/spead/recv_stream.h>
#include <gtest/gtest.h>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

using namespace gr::spead;
using namespace gr::spead::recv;
using namespace std::chrono_literals;
using spead_test::packet;
using spead_test::pattern;
using bytes = std::vector<std::uint8_t>;

namespace {

struct assembled {
    explicit assembled(const assembler_config& config,
                       std::shared_ptr<memory_allocator> allocator = nullptr)
        : pool(recv::detail::heap_pool::create(16, std::move(allocator))),
          assembler(config, pool, [this](heap&& h) { heaps.push_back(std::move(h)); })
    {
    }
    void add(const bytes& p) { assembler.add_packet(p.data(), p.size()); }
    std::uint64_t stat(recv_stat s) const { return assembler.stats()[s]; }

    std::shared_ptr<recv::detail::heap_pool> pool;
    std::vector<heap> heaps;
    heap_assembler assembler;
};

/*! Heap \p cnt of 64 bytes in two packets. */
bytes half(std::uint64_t cnt, int which)
{
    return packet(cnt, 64, which * 32, pattern(32, std::uint8_t(cnt + 32 * which)));
}

} // namespace

TEST(substreams, a_heap_is_evicted_only_by_newer_heaps_of_its_own_window)
{
    assembler_config config;
    config.max_heaps = 2;
    config.substreams = 2;
    assembled a(config);
    a.add(half(2, 0)); // even window
    for (std::uint64_t cnt = 3; cnt < 20; cnt += 2) {
        a.add(half(cnt, 0)); // odd window only, many more than max_heaps
        a.add(half(cnt, 1));
    }
    a.add(half(2, 1));
    ASSERT_EQ(a.heaps.size(), 10u);
    EXPECT_EQ(a.heaps.back().cnt(), 2u);
    EXPECT_TRUE(a.heaps.back().is_complete());
    EXPECT_EQ(a.stat(recv_stat::incomplete_heaps_evicted), 0u);
}

TEST(substreams, one_window_evicts_as_before)
{
    assembler_config config;
    config.max_heaps = 2;
    assembled a(config);
    a.add(half(2, 0));
    for (std::uint64_t cnt = 3; cnt < 20; cnt += 2) {
        a.add(half(cnt, 0));
        a.add(half(cnt, 1));
    }
    a.add(half(2, 1));
    EXPECT_EQ(a.heaps.size(), 9u);
    EXPECT_EQ(a.stat(recv_stat::incomplete_heaps_evicted), 1u);
    EXPECT_EQ(a.stat(recv_stat::packets_late), 1u);
}

TEST(substreams, zero_is_refused_naming_the_setting)
{
    stream_config config;
    EXPECT_THROW(config.set_substreams(0), std::invalid_argument);
    EXPECT_EQ(config.set_substreams(3).get_substreams(), 3u);
}

TEST(in_order_only, a_heap_starts_at_offset_0_and_a_gap_is_refused)
{
    assembler_config config;
    config.allow_out_of_order = false;
    config.incomplete = incomplete_heaps::deliver;
    assembled a(config);
    a.add(half(1, 1));                     // not its start: refused
    a.add(half(1, 0));                     // starts it
    a.add(packet(2, 96, 0, pattern(32)));  // heap 2 starts
    a.add(packet(2, 96, 64, pattern(32))); // a gap: refused
    a.add(packet(2, 96, 32, pattern(32))); // in order
    EXPECT_EQ(a.stat(recv_stat::packets_out_of_order), 2u);
    EXPECT_EQ(a.stat(recv_stat::packets), 5u);
    a.assembler.flush();
    ASSERT_EQ(a.heaps.size(), 2u);
    EXPECT_EQ(a.heaps[0].received_ranges(),
              (decltype(a.heaps[0].received_ranges()){ { 0, 32 } }));
    EXPECT_EQ(a.heaps[1].received_bytes(), 64u);
}

TEST(in_order_only, packets_out_of_order_are_placed_by_default)
{
    assembled a{ assembler_config() };
    a.add(half(1, 1));
    a.add(half(1, 0));
    ASSERT_EQ(a.heaps.size(), 1u);
    EXPECT_TRUE(a.heaps[0].is_complete());
    EXPECT_EQ(a.stat(recv_stat::packets_out_of_order), 0u);
}

TEST(sized_heaps_only, a_packet_without_heap_size_is_rejected_and_counted)
{
    assembler_config config;
    config.allow_unsized_heaps = false;
    assembled a(config);
    a.add(packet(1, -1, 0, pattern(16)));
    a.add(packet(2, 16, 0, pattern(16)));
    EXPECT_EQ(a.stat(recv_stat::packets_unsized), 1u);
    ASSERT_EQ(a.heaps.size(), 1u);
    EXPECT_EQ(a.heaps[0].cnt(), 2u);
}

TEST(nontemporal, copies_every_length_and_alignment_exactly)
{
    const bytes source = pattern(300, 5);
    for (std::size_t misalign = 0; misalign < 16; misalign++)
        for (std::size_t n : { 0, 1, 15, 16, 17, 63, 64, 65, 130, 255 }) {
            bytes target(300 + 16, 0xee);
            memcpy_nontemporal(target.data() + misalign, source.data() + 1, n);
            for (std::size_t i = 0; i < target.size(); i++) {
                const bool inside = i >= misalign && i < misalign + n;
                ASSERT_EQ(target[i], inside ? source[1 + i - misalign] : 0xee)
                    << "byte " << i << ", length " << n << ", offset " << misalign;
            }
        }
}

TEST(nontemporal, heaps_assemble_the_same)
{
    assembler_config config;
    config.nontemporal_copies = true;
    assembled a(config);
    const bytes payload = pattern(5000, 3);
    for (std::size_t off = 0; off < payload.size(); off += 1000)
        a.add(packet(1,
                     std::int64_t(payload.size()),
                     off,
                     bytes(payload.begin() + off, payload.begin() + off + 1000)));
    ASSERT_EQ(a.heaps.size(), 1u);
    EXPECT_EQ(bytes(a.heaps[0].payload(), a.heaps[0].payload() + 5000), payload);
}

namespace {
/*! Counts what it allocates, from the default allocator. */
struct counting_allocator : memory_allocator {
    pointer allocate(std::size_t size) override
    {
        calls++;
        return memory_allocator::allocate(size);
    }
    int calls = 0;
};
} // namespace

TEST(memory_allocator, a_stream_takes_its_heap_buffers_from_the_allocator_given)
{
    auto counting = std::make_shared<counting_allocator>();
    assembled a(assembler_config(), counting);
    a.add(packet(1, 100, 0, pattern(100)));
    ASSERT_EQ(a.heaps.size(), 1u);
    EXPECT_EQ(counting->calls, 1);
    EXPECT_EQ(bytes(a.heaps[0].payload(), a.heaps[0].payload() + 100), pattern(100));
}

TEST(memory_allocator, mmap_gives_writable_page_backed_memory_huge_pages_or_not)
{
    for (bool huge : { false, true }) {
        mmap_allocator mmap(0, huge);
        EXPECT_EQ(mmap.get_prefer_huge(), huge);
        auto p = mmap.allocate(10000);
        ASSERT_TRUE(p);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.get()) % 4096, 0u);
        std::memset(p.get(), 0x5a, 10000);
        EXPECT_EQ(p[9999], 0x5a);
    }
}

TEST(memory_allocator, an_mmap_stream_receives_as_any_other)
{
    const bytes data = packet(7, 3000, 0, pattern(3000));
    stream_config config;
    config.set_memory_allocator(std::make_shared<mmap_allocator>());
    stream s(config);
    s.emplace_reader<buffer_reader>(data.data(), data.size());
    heap h;
    ASSERT_EQ(s.pop(h, 10s), stream::pop_result::heap);
    EXPECT_EQ(bytes(h.payload(), h.payload() + 3000), pattern(3000));
}

TEST(explicit_start, readers_wait_for_start_and_none_may_be_added_after)
{
    const bytes data = packet(7, 16, 0, pattern(16));
    stream s(stream_config().set_explicit_start(true));
    s.emplace_reader<buffer_reader>(data.data(), data.size());
    heap h;
    EXPECT_EQ(s.pop(h, 50ms), stream::pop_result::timeout); // not started
    s.start();
    ASSERT_EQ(s.pop(h, 10s), stream::pop_result::heap);
    EXPECT_EQ(h.cnt(), 7u);
    EXPECT_THROW(s.emplace_reader<buffer_reader>(data.data(), data.size()),
                 std::logic_error);
    s.start(); // idempotent
}

TEST(explicit_start, stop_before_start_ends_the_stream)
{
    const bytes data = packet(7, 16, 0, pattern(16));
    stream s(stream_config().set_explicit_start(true));
    s.emplace_reader<buffer_reader>(data.data(), data.size());
    s.stop();
    heap h;
    EXPECT_EQ(s.pop(h, 1s), stream::pop_result::stopped);
}

TEST(explicit_start, start_does_nothing_without_it)
{
    const bytes data = packet(7, 16, 0, pattern(16));
    stream s;
    s.emplace_reader<buffer_reader>(data.data(), data.size());
    s.start();
    heap h;
    ASSERT_EQ(s.pop(h, 10s), stream::pop_result::heap);
    s.emplace_reader<buffer_reader>(data.data(), data.size()); // still allowed
}
