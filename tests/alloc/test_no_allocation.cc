/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Once warm, the receive path allocates nothing: not per packet, and not per heap
// either (heap storage, item vectors and sort scratch are pooled). A binary of its own
// because it replaces the global operator new to count allocations.

#include "../unit/packet_builder.h"
#include "protocol/heap_assembler.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <random>

namespace {
std::atomic<std::size_t> allocations{ 0 };
}

// This operator new takes memory from malloc, so free is the matching release; GCC
// cannot see that.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t n)
{
    allocations++;
    if (void* p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace gr::spead;
using spead_test::packet;
using spead_test::pattern;

namespace {

/*! Heap cnt's packets, shuffled, with immediates and addressed items spread over them. */
std::vector<std::vector<std::uint8_t>> heap_packets(std::uint64_t cnt, std::mt19937& rng)
{
    std::vector<std::vector<std::uint8_t>> out;
    for (std::uint64_t off = 0; off < 8000; off += 1000)
        out.push_back(
            packet(cnt,
                   8000,
                   off,
                   pattern(1000, std::uint8_t(off)),
                   { { false, 0x1000 + off / 1000, off }, { true, 0x2000, cnt } }));
    std::shuffle(out.begin(), out.end(), rng);
    return out;
}

} // namespace

TEST(no_allocation, assembling_warm_heaps_allocates_nothing)
{
    std::mt19937 rng(7);
    std::vector<std::vector<std::vector<std::uint8_t>>> heaps;
    for (std::uint64_t cnt = 1; cnt <= 200; cnt++)
        heaps.push_back(heap_packets(cnt, rng));

    std::size_t delivered = 0;
    recv::heap_assembler assembler(
        recv::assembler_config(),
        recv::detail::heap_pool::create(8),
        [&delivered](recv::heap&& h) {
            delivered +=
                h.is_complete() &&
                h.items().size() == 9; // 8 addressed, 1 immediate (repeats removed)
        });
    for (std::size_t i = 0; i < 100; i++) // warm: storages reach their capacities
        for (const auto& p : heaps[i])
            assembler.add_packet(p.data(), p.size());
    const std::size_t before = allocations.load();
    for (std::size_t i = 100; i < heaps.size(); i++)
        for (const auto& p : heaps[i])
            assembler.add_packet(p.data(), p.size());
    EXPECT_EQ(allocations.load() - before, 0u);
    EXPECT_EQ(delivered, 200u);
}
