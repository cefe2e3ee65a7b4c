/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The heap buffer allocators: aligned heap memory (the default) and mmap.

#include <gnuradio/spead/memory_allocator.h>
#include <sys/mman.h>
#include <cstdlib>
#include <new>

namespace gr {
namespace spead {

namespace {
constexpr std::size_t buffer_alignment = 64; // a cache line: memcpy runs at full speed
} // namespace

memory_allocator::~memory_allocator() = default;

memory_allocator::pointer memory_allocator::allocate(std::size_t size)
{
    // aligned_alloc wants a multiple of the alignment
    const std::size_t rounded =
        (size + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
    void* raw =
        std::aligned_alloc(buffer_alignment, rounded == 0 ? buffer_alignment : rounded);
    if (!raw)
        throw std::bad_alloc();
    return pointer(static_cast<std::uint8_t*>(raw),
                   [](std::uint8_t* p) { std::free(p); });
}

mmap_allocator::mmap_allocator(int flags, bool prefer_huge)
    : d_flags(flags), d_prefer_huge(prefer_huge)
{
}

memory_allocator::pointer mmap_allocator::allocate(std::size_t size)
{
    if (size == 0)
        size = 1; // mmap refuses a length of 0
    const int flags = d_flags | MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
    void* p = MAP_FAILED;
    std::size_t length = size;
    if (d_prefer_huge) {
        // A huge-page mapping is unmapped whole: map (and later unmap) whole pages.
        constexpr std::size_t huge_page = std::size_t(2) << 20;
        length = (size + huge_page - 1) / huge_page * huge_page;
        p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, flags | MAP_HUGETLB, -1, 0);
    }
    if (p == MAP_FAILED) { // no huge pages to give, or none asked for
        length = size;
        p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, flags, -1, 0);
    }
    if (p == MAP_FAILED)
        throw std::bad_alloc();
    return pointer(static_cast<std::uint8_t*>(p),
                   [length](std::uint8_t* q) { ::munmap(q, length); });
}

} // namespace spead
} // namespace gr
