/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "heap_placement.h"
#include "spin_then_lock.h"
#include <algorithm>
#include <utility>

namespace gr {
namespace spead {
namespace recv {

namespace {

/*!
 * A pause in the traffic at least this long may be a sender restarting (see
 * heap_assembler::note_pause()). Restarting a process takes longer; packets of one
 * run, a network's duplicates included, come closer together unless the sender
 * itself pauses, and then a duplicate must also be the first packet after it to be
 * taken for a restart.
 */
constexpr std::chrono::milliseconds sender_restart_gap(10);

} // namespace

assembler_config assembler_config_for(const stream_config& config)
{
    assembler_config out;
    out.max_heaps = config.get_max_heaps();
    out.max_heap_size = config.get_max_heap_size();
    out.incomplete = config.get_incomplete_heaps();
    // A continuous stream's stop heap ends only the reader it came in by (one sender
    // of several, on its own thread); the stream ends once every reader has.
    out.stop_on_stop_heap = config.get_stop_on_stop_heap() && !config.is_continuous();
    // As spead2: a stop heap that does not stop the stream is a heap like any other.
    out.deliver_stop_heaps = !config.is_continuous();
    // A continuous stream's data heaps are placed in chunks and counted there (heaps):
    // the heaps assembled here are its control heaps.
    out.heaps_stat = config.is_continuous() ? recv_stat::control_heaps : recv_stat::heaps;
    out.substreams = config.get_substreams();
    out.allow_unsized_heaps = config.get_allow_unsized_heaps();
    out.allow_out_of_order = config.get_allow_out_of_order();
    out.nontemporal_copies = config.get_memcpy() == memcpy_function::nontemporal;
    out.validate();
    return out;
}

heap_placement::heap_placement(stream_core& core, const stream_config& config)
    : placement(core),
      d_pool(detail::heap_pool::create(config.get_pool_heaps(),
                                       config.get_memory_allocator())),
      d_assembler_config(assembler_config_for(config)),
      d_queue(config.get_queue_heaps()),
      d_block(config.get_full_queue_policy() == full_queue_policy::block),
      // A packet completes at most one heap and, when incomplete heaps are delivered,
      // evicts at most one more.
      d_heaps_per_packet(config.get_incomplete_heaps() == incomplete_heaps::deliver ? 2
                                                                                    : 1)
{
    add_assembler(0);
}

heap_assembler& heap_placement::add_assembler(std::size_t source)
{
    if (source >= d_assemblers.size())
        d_assemblers.resize(source + 1);
    d_assemblers[source] = std::make_unique<heap_assembler>(
        d_assembler_config, d_pool, [this](heap&& h) { enqueue(std::move(h)); });
    return *d_assemblers[source];
}

void heap_placement::end_source(std::size_t source)
{
    std::unique_lock<std::mutex> lock(d_core.mutex);
    if (source == 0 || source >= d_assemblers.size() || !d_assemblers[source] ||
        d_core.stopped.load())
        return; // nothing came from it, or the stream's end flushed it
    heap_assembler& a = *d_assemblers[source];
    if (!a.is_stopped() && a.live_heaps() != 0)
        a.flush(); // its partial heaps: counted (or delivered) as flushed
    d_ended_stats += a.stats();
    d_assemblers[source].reset(); // the next sender's is made at its first batch
    unlock_and_wake(lock);
}

void heap_placement::note_batch_locked(std::size_t n, std::size_t source)
{
    heap_assembler& a = assembler(source);
    const auto now = std::chrono::steady_clock::now();
    if (now - d_last_batch >= sender_restart_gap)
        a.note_pause();
    d_last_batch = now;
    a.note_batch(n);
}

bool heap_placement::add_batch(const packet_view* packets,
                               std::size_t n,
                               std::size_t source)
{
    std::unique_lock<std::mutex> lock(d_core.mutex, std::defer_lock);
    spin_then_lock(lock); // other readers hold it only briefly
    heap_assembler& assembler = this->assembler(source);
    note_batch_locked(n, source);
    // After a stop heap the assembler counts the rest of the batch in
    // packets_after_stop.
    if (d_block && !room_for_locked(n)) {
        for (std::size_t i = 0; i < n; i++) {
            wait_for_room_locked(lock, assembler);
            assembler.add_packet(packets[i].data, packets[i].size);
        }
    } else {
        for (std::size_t i = 0; i < n; i++)
            assembler.add_packet(packets[i].data, packets[i].size);
    }
    // A stop heap ends the stream, but one from a reader's own source (a sender of
    // several, a listener's connection) ends that sender only: add_packets() returns
    // false, the reader ends its connection, and the stream ends once the reader has.
    const bool own_source_stopped = source != 0 && assembler.is_stopped();
    if (assembler.is_stopped() && !own_source_stopped && !d_core.stopped.load())
        d_core.end_locked(lock);
    const bool open = !d_core.stopped.load() && !own_source_stopped;
    unlock_and_wake(lock);
    return open;
}

bool heap_placement::room_for_locked(std::size_t packets) const
{
    return d_queue.capacity() - d_queue.size() >= packets * d_heaps_per_packet;
}

void heap_placement::wait_for_room_locked(std::unique_lock<std::mutex>& lock,
                                          heap_assembler& a)
{
    const std::size_t need = std::min(d_heaps_per_packet, d_queue.capacity());
    const auto room = [&] {
        return d_queue.capacity() - d_queue.size() >= need || d_core.stopped.load() ||
               a.is_stopped();
    };
    if (room())
        return;
    d_stats[recv_stat::reader_waits_queue_full]++;
    // The consumer may sleep on an empty queue this batch has filled: wake it now,
    // not after the batch (unlock_and_wake()), or both would wait.
    if (std::exchange(d_consumer_to_wake, false))
        d_heap_available.notify_one();
    // The lock is released while waiting, between two packets: other readers, pop()
    // and stop() find the assembler as after a whole batch. stop() and the end
    // notify d_space_available; the timeout is only a safety net.
    while (!room())
        d_space_available.wait_for(lock, std::chrono::milliseconds(100));
}

void heap_placement::enqueue(heap&& h)
{
    if (d_queue.full()) {
        // Policy drop (or a stop heap flushing more heaps than the queue holds): the
        // newest heap goes, the reader does not wait for the consumer.
        d_stats[recv_stat::heaps_dropped_queue_full]++;
        heap dropped = std::move(h); // its storage goes back to the pool here
        return;
    }
    d_queue.push(std::move(h));
    d_consumer_to_wake = true;
}

void heap_placement::flush_locked()
{
    for (auto& a : d_assemblers) {
        if (!a)
            continue;
        if (!a->is_stopped())
            a->stop(); // flushes: live heaps are counted (or delivered) as flushed
        else if (a->live_heaps() != 0)
            a->flush();
    }
}

void heap_placement::wake_all_locked()
{
    d_consumer_to_wake = false;
    d_heap_available.notify_all();
    d_space_available.notify_all();
}

bool heap_placement::pop(heap& out, std::chrono::microseconds timeout, bool& stopped)
{
    std::unique_lock<std::mutex> lock(d_core.mutex);
    const auto ready = [this] { return !d_queue.empty() || d_core.stopped.load(); };
    if (!ready()) // the usual case under load: no clock reading
        d_heap_available.wait_for(lock, timeout, ready);
    if (!d_queue.empty()) {
        d_queue.pop_into(out);
        d_space_available.notify_one();
        return true;
    }
    stopped = d_core.stopped.load();
    return false;
}

bool heap_placement::try_pop(heap& out)
{
    std::lock_guard<std::mutex> lock(d_core.mutex);
    if (d_queue.empty())
        return false;
    d_queue.pop_into(out);
    d_space_available.notify_one();
    return true;
}

std::size_t heap_placement::wait_for_queue_space(std::chrono::microseconds timeout)
{
    std::unique_lock<std::mutex> lock(d_core.mutex);
    const auto room = [this] { return !d_queue.full() || d_core.stopped.load(); };
    if (!room()) {
        // A lossless reader waits for the consumer: counted once per wait, not per
        // timeout it calls again after (spead2's worker_blocked).
        if (!std::exchange(d_lossless_waiting, true))
            d_stats[recv_stat::reader_waits_queue_full]++;
        d_space_available.wait_for(lock, timeout, room);
    }
    if (room())
        d_lossless_waiting = false;
    if (d_core.stopped.load())
        return 0;
    return d_queue.capacity() - d_queue.size();
}

void heap_placement::add_stats_locked(recv_stats& out) const
{
    for (const auto& a : d_assemblers)
        if (a)
            out += a->stats();
    out += d_ended_stats;
    out += d_stats;
}

} // namespace recv
} // namespace spead
} // namespace gr
