/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead2's chunk ring stream: the assembler between a free ring and a data ring.

#include "chunk_ring_placement.h"
#include <algorithm>
#include <limits>

namespace gr {
namespace spead {
namespace recv {

chunk_ring_placement::chunk_ring_placement(stream_core& core, const stream_config& config)
    : placement(core),
      d_setup(config.get_chunk_stream()),
      d_no_heaps(core, config),
      d_stop_on_stop_heap(config.get_stop_on_stop_heap())
{
    chunk_stream_setup& s = *d_setup;
    d_assembler = std::make_unique<chunk_stream_assembler>(
        s.config,
        assembler_config_for(config),
        [&s](std::int64_t id, std::uint64_t*) { return s.acquire(id); },
        [&s](stream_chunk* c, std::uint64_t*) {
            if (c)
                s.ready(c);
        },
        s.head_updated);
    s.try_flush_until = [this](std::uint64_t target) {
        std::unique_lock<std::mutex> lock(d_core.mutex, std::try_to_lock);
        if (!lock.owns_lock())
            return false; // placing a batch: it looks at flush_request afterwards
        d_assembler->flush_until(target);
        return true;
    };
    std::lock_guard<std::mutex> lock(s.stats_mutex);
    s.custom_stats = d_assembler->custom_stats();
    s.custom_totals.assign(s.custom_stats.size(), 0);
}

void chunk_ring_placement::serve_flush_request()
{
    const std::uint64_t target = d_setup->flush_request.load(std::memory_order_relaxed);
    if (target != 0)
        d_assembler->flush_until(target);
}

bool chunk_ring_placement::add_batch(const packet_view* packets,
                                     std::size_t n,
                                     std::size_t /*source*/)
{
    // Chunks are placed by timestamp, whoever sent them: sources need nothing here.
    std::unique_lock<std::mutex> lock(d_core.mutex);
    if (d_core.stopped.load())
        return false;
    chunk_stream_assembler& a = *d_assembler;
    serve_flush_request();
    bool stop = false;
    for (std::size_t i = 0; i < n && !stop; i++)
        stop = !a.add_packet(packets[i].data, packets[i].size) && d_stop_on_stop_heap;
    d_batches++;
    d_max_batch = std::max<std::uint64_t>(d_max_batch, n);
    serve_flush_request();
    {
        std::lock_guard<std::mutex> stats_lock(d_setup->stats_mutex);
        a.merge_batch_stats(d_setup->custom_totals);
    }
    if (stop)
        d_core.end_locked(lock);
    return !d_core.stopped.load();
}

void chunk_ring_placement::flush_locked()
{
    d_assembler->flush();
    {
        std::lock_guard<std::mutex> stats_lock(d_setup->stats_mutex);
        d_assembler->merge_batch_stats(d_setup->custom_totals);
    }
    if (!std::exchange(d_ended, true) && d_setup->ended)
        d_setup->ended();
}

std::size_t chunk_ring_placement::wait_for_queue_space(std::chrono::microseconds)
{
    // The rings make the reader wait where needed: nothing to wait for here.
    return d_core.stopped.load() ? 0 : std::numeric_limits<std::uint32_t>::max();
}

void chunk_ring_placement::add_stats_locked(recv_stats& out) const
{
    out += d_assembler->stats();
    out[recv_stat::batches] += d_batches;
    out[recv_stat::max_batch] = std::max(out[recv_stat::max_batch], d_max_batch);
}

} // namespace recv
} // namespace spead
} // namespace gr
