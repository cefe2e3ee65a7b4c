/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "chunk_queue.h"
#include <utility>

namespace gr {
namespace spead {
namespace recv {

void chunk_queue::configure(std::size_t positions,
                            std::size_t substreams,
                            std::size_t heap_bytes,
                            std::size_t max_chunks)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_positions = positions;
    d_substreams = substreams;
    d_heap_bytes = heap_bytes;
    d_max_chunks = max_chunks;
    note_available_locked();
    // Runs of lost positions merge, so at most one lies between two chunks.
    d_ready = ring_fifo<chunk_entry>(2 * max_chunks + 2);
}

std::unique_ptr<chunk> chunk_queue::acquire()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (!d_free.empty()) {
        auto c = std::move(d_free.back());
        d_free.pop_back();
        note_available_locked();
        return c;
    }
    if (d_allocated == d_max_chunks)
        return nullptr;
    d_allocated++;
    note_available_locked();
    return std::make_unique<chunk>(d_positions, d_substreams, d_heap_bytes);
}

void chunk_queue::push(chunk_entry&& e)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (!e.data && !d_ready.empty()) {
        chunk_entry& last = d_ready.back();
        if (!last.data && last.first_index + last.positions == e.first_index) {
            last.positions += e.positions;
            return;
        }
    }
    d_ready.push(std::move(e));
    if (d_pop_waiters != 0)
        d_wake_pending.store(true);
}

void chunk_queue::wake_consumer()
{
    if (d_wake_pending.load(std::memory_order_relaxed) && d_wake_pending.exchange(false))
        d_ready_changed.notify_all();
}

bool chunk_queue::pop(chunk_entry& out,
                      std::chrono::microseconds timeout,
                      const std::atomic<bool>& stopped)
{
    std::unique_lock<std::mutex> lock(d_mutex);
    d_pop_waiters++;
    d_ready_changed.wait_for(
        lock, timeout, [&] { return !d_ready.empty() || stopped.load(); });
    d_pop_waiters--;
    if (d_ready.empty())
        return false;
    d_ready.pop_into(out);
    return true;
}

void chunk_queue::give_back(std::unique_ptr<chunk> c)
{
    if (!c)
        return;
    std::unique_lock<std::mutex> lock(d_mutex);
    d_free.push_back(std::move(c));
    note_available_locked();
    const bool wake = d_free_waiters != 0;
    lock.unlock();
    if (wake)
        d_free_changed.notify_all();
}

std::size_t chunk_queue::wait_available(std::size_t needed,
                                        std::chrono::microseconds timeout,
                                        const std::atomic<bool>& stopped)
{
    // Most batches find room: no lock, no write to a line the others use.
    const std::size_t now = d_available.load();
    if (now >= needed || stopped.load())
        return now;
    std::unique_lock<std::mutex> lock(d_mutex);
    d_free_waiters++;
    d_free_changed.wait_for(
        lock, timeout, [&] { return available() >= needed || stopped.load(); });
    d_free_waiters--;
    return available();
}

void chunk_queue::wake()
{
    {
        // Taken so that a waiter between its check and its wait cannot miss this.
        std::lock_guard<std::mutex> lock(d_mutex);
    }
    d_ready_changed.notify_all();
    d_free_changed.notify_all();
}

} // namespace recv
} // namespace spead
} // namespace gr
