/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_HEAP_POOL_H
#define INCLUDED_SPEAD_PROTOCOL_HEAP_POOL_H

#include "interval_set.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/flavour.h>
#include <gnuradio/spead/memory_allocator.h>
#include <gnuradio/spead/recv_heap.h>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

namespace gr {
namespace spead {
namespace recv {
namespace detail {

/*! An item pointer as it came off the wire, with where it came from (for wire order). */
struct SPEAD_API raw_item_pointer {
    std::uint64_t pointer;
    std::uint64_t packet_offset; //!< payload offset of the packet that carried it
    std::uint32_t index;         //!< position among that packet's pointers
};

/*!
 * \brief Everything one heap needs, live or delivered. Pooled: vectors and the payload
 * buffer keep their capacity from heap to heap, so assembly allocates nothing once warm.
 */
struct SPEAD_API heap_storage {
    // --- identity and progress (live) ---
    std::uint64_t cnt = 0;
    gr::spead::flavour heap_flavour;
    bool has_heap_size = false;
    std::uint64_t heap_size = 0; //!< valid when has_heap_size
    std::uint64_t extent = 0;    //!< largest offset + length seen
    std::uint64_t received = 0;  //!< payload bytes placed
    std::size_t packets = 0;
    bool had_empty_packet = false;
    bool pointers_in_order = true;
    std::uint64_t last_pointer_offset = 0;
    interval_set received_ranges;
    std::vector<raw_item_pointer> raw_pointers;

    // --- payload buffer ---
    memory_allocator::pointer buffer;
    std::size_t capacity = 0;
    /*! Where buffer comes from (its pool's allocator; null: the default one). */
    memory_allocator* allocator = nullptr;

    // --- frozen view (filled when the heap leaves the assembler) ---
    bool complete = false;
    std::vector<item> items;
    std::vector<std::array<std::uint8_t, 8>> immediates;
    std::vector<std::size_t> scratch;        //!< index scratch for sorting
    std::vector<std::uint64_t> item_lengths; //!< per raw pointer, filled by freeze

    /*! Makes the buffer hold at least \p size bytes; keeps the first \p keep bytes. */
    void reserve_payload(std::size_t size, std::size_t keep);
    /*! Back to the state of a new heap (capacities kept). */
    void reset();
};

/*!
 * \brief A thread-safe free list of heap_storage. The assembler takes storage when a heap
 * starts; a delivered heap gives it back when the consumer drops it, from any thread.
 * Held by shared_ptr so heaps that outlive their stream can still return (or free) it.
 */
class SPEAD_API heap_pool : public std::enable_shared_from_this<heap_pool>
{
public:
    /*! \param max_retained storages kept for reuse; more are freed on release
     * \param allocator where payload buffers come from (null: the default) */
    static std::shared_ptr<heap_pool>
    create(std::size_t max_retained,
           std::shared_ptr<memory_allocator> allocator = nullptr);

    heap_storage_ptr acquire();
    void release(heap_storage* storage);
    std::size_t retained() const;

private:
    heap_pool(std::size_t max_retained, std::shared_ptr<memory_allocator> allocator);

    const std::shared_ptr<memory_allocator> d_allocator;
    mutable std::mutex d_mutex;
    std::vector<std::unique_ptr<heap_storage>> d_free;
    std::size_t d_max_retained;
};

} // namespace detail
} // namespace recv
} // namespace spead
} // namespace gr

#endif
