/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "heap_pool.h"
#include <algorithm>
#include <cstring>
#include <new>

namespace gr {
namespace spead {
namespace recv {
namespace detail {

namespace {
constexpr std::size_t buffer_granule = 4096; // round sizes up to whole pages
} // namespace

void heap_storage::reserve_payload(std::size_t size, std::size_t keep)
{
    if (size <= capacity)
        return;
    const std::size_t new_capacity =
        (size + buffer_granule - 1) / buffer_granule * buffer_granule;
    static memory_allocator aligned; // the default: cache-line aligned heap memory
    memory_allocator::pointer fresh =
        (allocator ? allocator : &aligned)->allocate(new_capacity);
    // An empty packet can move the extent past what was ever stored: nothing lies there.
    keep = std::min(keep, capacity);
    if (keep > 0)
        std::memcpy(fresh.get(), buffer.get(), keep);
    buffer = std::move(fresh);
    capacity = new_capacity;
}

void heap_storage::reset()
{
    cnt = 0;
    heap_flavour = gr::spead::flavour();
    has_heap_size = false;
    heap_size = 0;
    extent = 0;
    received = 0;
    packets = 0;
    had_empty_packet = false;
    pointers_in_order = true;
    last_pointer_offset = 0;
    received_ranges.clear();
    raw_pointers.clear();
    complete = false;
    items.clear();
    immediates.clear();
}

std::shared_ptr<heap_pool> heap_pool::create(std::size_t max_retained,
                                             std::shared_ptr<memory_allocator> allocator)
{
    return std::shared_ptr<heap_pool>(new heap_pool(max_retained, std::move(allocator)));
}

heap_pool::heap_pool(std::size_t max_retained,
                     std::shared_ptr<memory_allocator> allocator)
    : d_allocator(std::move(allocator)), d_max_retained(max_retained)
{
}

heap_storage_ptr heap_pool::acquire()
{
    std::unique_ptr<heap_storage> storage;
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        if (!d_free.empty()) {
            storage = std::move(d_free.back());
            d_free.pop_back();
        }
    }
    if (!storage) {
        storage = std::make_unique<heap_storage>();
        storage->allocator = d_allocator.get(); // the pool outlives its storages' use
    }
    storage->reset();
    return heap_storage_ptr(storage.release(),
                            heap_storage_release{ shared_from_this() });
}

void heap_pool::release(heap_storage* storage)
{
    std::unique_ptr<heap_storage> owned(storage);
    std::lock_guard<std::mutex> lock(d_mutex);
    if (d_free.size() < d_max_retained)
        d_free.push_back(std::move(owned));
    // else: owned frees it (outside the list, still under the lock: cheap enough)
}

std::size_t heap_pool::retained() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_free.size();
}

void heap_storage_release::operator()(heap_storage* storage) const
{
    if (pool)
        pool->release(storage);
    else
        delete storage;
}

} // namespace detail
} // namespace recv
} // namespace spead
} // namespace gr
