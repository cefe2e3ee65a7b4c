/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MEMORY_ALLOCATOR_H
#define INCLUDED_SPEAD_MEMORY_ALLOCATOR_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace gr {
namespace spead {

/*!
 * \brief Where a receive stream's heap payload buffers come from (spead2's
 * memory_allocator; recv::stream_config::set_memory_allocator()).
 *
 * A stream keeps its buffers in a pool and reuses them (growing one only for a larger
 * heap), so an allocator is called when the pool grows, never per packet. The
 * default gives 64-byte aligned heap memory.
 */
class SPEAD_API memory_allocator
{
public:
    using deleter = std::function<void(std::uint8_t*)>;
    using pointer = std::unique_ptr<std::uint8_t[], deleter>;

    virtual ~memory_allocator();

    /*! \p size bytes, aligned to a cache line. \throws std::bad_alloc */
    virtual pointer allocate(std::size_t size);
};

/*!
 * \brief Buffers mapped straight from the kernel (spead2's mmap_allocator), faulted
 * in when allocated (MAP_POPULATE), so the first packets of a heap do not take page
 * faults; optionally in huge pages.
 */
class SPEAD_API mmap_allocator : public memory_allocator
{
public:
    /*!
     * \param flags added to mmap's (MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE), e.g.
     *        MAP_LOCKED
     * \param prefer_huge try huge pages (MAP_HUGETLB) first, and ordinary pages when
     *        the system has none to give
     */
    explicit mmap_allocator(int flags = 0, bool prefer_huge = false);

    pointer allocate(std::size_t size) override;

    int get_flags() const { return d_flags; }
    bool get_prefer_huge() const { return d_prefer_huge; }

private:
    int d_flags;
    bool d_prefer_huge;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MEMORY_ALLOCATOR_H */
