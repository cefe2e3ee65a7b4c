/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::stream: its readers, its placement (heap or chunk), and how it ends.

#include "chunk_placement.h"
#include "chunk_ring_placement.h"
#include "heap_placement.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_stream.h>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

void stream_core::end_locked(std::unique_lock<std::mutex>& lock)
{
    // Copies other readers are making go in before the positions are flushed.
    placing->drain_locked(lock);
    if (stopped.load())
        return; // ended while this thread waited
    placing->flush_locked();
    stopped.store(true);
    placing->wake_all_locked();
}

void stream_core::fail_locked(std::unique_lock<std::mutex>& lock,
                              const std::string& what,
                              const std::string& message)
{
    if (!failure.empty())
        return; // the stream has already ended, and said why
    failure = what;
    gr::logger logger("spead recv_stream");
    logger.error("{}", message);
    if (!stopped.load())
        end_locked(lock);
}

struct stream::impl {
    explicit impl(const stream_config& config)
    {
        if (config.get_chunk_stream())
            placing = std::make_unique<chunk_ring_placement>(core, config);
        else if (config.is_continuous())
            placing = std::make_unique<chunk_placement>(core, config);
        else
            placing = std::make_unique<heap_placement>(core, config);
        core.placing = placing.get();
        started = !config.get_explicit_start();
    }

    stream_core core;
    std::unique_ptr<placement> placing;

    // Guards the reader list. Never taken by a reader thread, so stop() can hold it
    // while joining them; taken before core.mutex when both are needed.
    mutable std::mutex readers_mutex;
    std::vector<std::unique_ptr<reader>> readers;
    /*! The readers have been started (at once, or by start() with explicit_start);
     * readers_mutex. */
    bool started;
};

stream::stream(const stream_config& config)
    : d_config(config), d_impl(std::make_unique<impl>(config))
{
}

stream::~stream()
{
    stop();
    // Readers go before the placement they feed.
    std::lock_guard<std::mutex> lock(d_impl->readers_mutex);
    d_impl->readers.clear();
}

void stream::add_reader(std::unique_ptr<reader> r)
{
    if (!r)
        throw std::invalid_argument("add_reader: reader is null");
    std::lock_guard<std::mutex> readers_lock(d_impl->readers_mutex);
    const bool explicit_start = d_config.get_explicit_start();
    if (explicit_start && d_impl->started)
        throw std::logic_error("add_reader: the stream has started (explicit_start); "
                               "add every reader before start()");
    {
        std::lock_guard<std::mutex> lock(d_impl->core.mutex);
        d_impl->core.readers_added++;
        d_impl->core.several_readers.store(d_impl->core.readers_added > 1);
    }
    d_impl->readers.push_back(std::move(r));
    // A reader added after the stream ended starts, finds add_packets() returning false
    // and returns; stop() or the destructor joins it.
    if (!explicit_start)
        d_impl->readers.back()->start();
}

void stream::start()
{
    std::lock_guard<std::mutex> readers_lock(d_impl->readers_mutex);
    if (std::exchange(d_impl->started, true))
        return; // started already (or at once: no explicit_start)
    for (auto& r : d_impl->readers)
        r->start();
}

bool stream::add_packets(const packet_view* packets, std::size_t n, std::size_t source)
{
    return d_impl->placing->add_batch(packets, n, source);
}

std::size_t stream::reserve_sources(std::size_t n)
{
    std::lock_guard<std::mutex> lock(d_impl->core.mutex);
    const std::size_t first = d_impl->core.sources;
    d_impl->core.sources += n;
    return first;
}

void stream::end_source(std::size_t source) { d_impl->placing->end_source(source); }

std::size_t stream::wait_for_queue_space(std::chrono::microseconds timeout)
{
    return d_impl->placing->wait_for_queue_space(timeout);
}

stream::pop_result stream::pop(heap& out, std::chrono::microseconds timeout)
{
    bool stopped = false;
    if (d_impl->placing->heaps().pop(out, timeout, stopped))
        return pop_result::heap;
    return stopped ? pop_result::stopped : pop_result::timeout;
}

bool stream::try_pop(heap& out) { return d_impl->placing->heaps().try_pop(out); }

namespace {
chunk_queue& chunks_of(placement& p)
{
    chunk_queue* chunks = p.chunks();
    if (!chunks)
        throw std::logic_error("pop_chunk: this stream assembles heaps; make it with "
                               "stream_config::set_continuous() to pop chunks, or use "
                               "pop()");
    return *chunks;
}
} // namespace

stream::pop_result stream::pop_chunk(chunk_entry& out, std::chrono::microseconds timeout)
{
    chunk_queue& chunks = chunks_of(*d_impl->placing);
    const std::atomic<bool>& stopped = d_impl->core.stopped;
    if (chunks.pop(out, timeout, stopped))
        return pop_result::heap;
    // Stopped is set after the last chunk went in: one more look finds it.
    if (stopped.load())
        return chunks.pop(out, std::chrono::microseconds(0), stopped)
                   ? pop_result::heap
                   : pop_result::stopped;
    return pop_result::timeout;
}

bool stream::try_pop_chunk(chunk_entry& out)
{
    return chunks_of(*d_impl->placing)
        .pop(out, std::chrono::microseconds(0), d_impl->core.stopped);
}

void stream::return_chunk(std::unique_ptr<chunk> c)
{
    if (chunk_queue* chunks = d_impl->placing->chunks())
        chunks->give_back(std::move(c));
}

std::size_t stream::get_heap_bytes() const { return d_impl->placing->heap_bytes(); }

bool stream::is_stopped() const { return d_impl->core.stopped.load(); }

void stream::reader_finished()
{
    stream_core& core = d_impl->core;
    std::unique_lock<std::mutex> lock(core.mutex);
    core.readers_finished++;
    if (core.readers_finished >= core.readers_added && !core.stopped.load())
        core.end_locked(lock);
}

void stream::reader_failed(const std::string& what)
{
    stream_core& core = d_impl->core;
    std::unique_lock<std::mutex> lock(core.mutex);
    core.errors[recv_stat::reader_errors]++;
    core.fail_locked(lock,
                     what,
                     "a reader failed: " + what +
                         "; the stream ends (heaps completed before the failure are "
                         "still delivered)");
}

bool stream::has_failed() const
{
    std::lock_guard<std::mutex> lock(d_impl->core.mutex);
    return !d_impl->core.failure.empty();
}

std::string stream::get_failure() const
{
    std::lock_guard<std::mutex> lock(d_impl->core.mutex);
    return d_impl->core.failure;
}

void stream::stop()
{
    // End the stream first, so a batch a reader is handing over right now is counted
    // in packets_after_stop and the reader leaves its loop at once.
    {
        std::unique_lock<std::mutex> lock(d_impl->core.mutex);
        if (!d_impl->core.stopped.load())
            d_impl->core.end_locked(lock);
    }
    std::lock_guard<std::mutex> readers_lock(d_impl->readers_mutex);
    for (auto& r : d_impl->readers)
        r->join();
}

recv_stats stream::get_stats() const
{
    recv_stats out;
    std::lock_guard<std::mutex> readers_lock(d_impl->readers_mutex);
    {
        std::lock_guard<std::mutex> lock(d_impl->core.mutex);
        d_impl->placing->add_stats_locked(out);
        out += d_impl->core.errors;
    }
    for (const auto& r : d_impl->readers)
        out += r->transport_stats();
    return out;
}

std::size_t stream::get_queued_heaps() const
{
    std::lock_guard<std::mutex> lock(d_impl->core.mutex);
    return d_impl->placing->heaps().queued_locked();
}

} // namespace recv
} // namespace spead
} // namespace gr
