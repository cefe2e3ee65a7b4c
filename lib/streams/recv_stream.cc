/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/heap_assembler.h"
#include "protocol/heap_pool.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_stream.h>
#include <condition_variable>
#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace recv {

// ---- stream_config ---------------------------------------------------------------

stream_config& stream_config::set_max_heaps(std::size_t n)
{
    if (n == 0)
        throw std::invalid_argument(
            "max_heaps: must be at least 1 (live heaps assembled at once; "
            "raise it when senders interleave heaps or packets arrive out of order)");
    d_max_heaps = n;
    return *this;
}

stream_config& stream_config::set_max_heap_size(std::size_t bytes)
{
    if (bytes == 0)
        throw std::invalid_argument(
            "max_heap_size: must be at least 1 byte (the largest heap payload "
            "accepted; default 64 MiB)");
    d_max_heap_size = bytes;
    return *this;
}

stream_config& stream_config::set_incomplete_heaps(incomplete_heaps policy)
{
    if (policy != incomplete_heaps::drop && policy != incomplete_heaps::deliver)
        throw std::invalid_argument(
            "incomplete_heaps: unknown policy " +
            std::to_string(static_cast<int>(policy)) +
            "; use incomplete_heaps::drop or incomplete_heaps::deliver");
    d_incomplete = policy;
    return *this;
}

stream_config& stream_config::set_stop_on_stop_heap(bool stop)
{
    d_stop_on_stop_heap = stop;
    return *this;
}

stream_config& stream_config::set_queue_heaps(std::size_t n)
{
    if (n == 0)
        throw std::invalid_argument(
            "queue_heaps: must be at least 1 (completed heaps waiting for the "
            "consumer; default 8)");
    d_queue_heaps = n;
    return *this;
}

// ---- stream ----------------------------------------------------------------------

namespace {

assembler_config make_assembler_config(const stream_config& config)
{
    assembler_config out;
    out.max_heaps = config.get_max_heaps();
    out.max_heap_size = config.get_max_heap_size();
    out.incomplete = config.get_incomplete_heaps();
    out.stop_on_stop_heap = config.get_stop_on_stop_heap();
    out.validate();
    return out;
}

/*! Fixed-capacity FIFO of heaps: slots are allocated once, so queueing a heap never
 * allocates. */
class heap_ring
{
public:
    explicit heap_ring(std::size_t capacity) : d_slots(capacity) {}

    bool empty() const { return d_count == 0; }
    bool full() const { return d_count == d_slots.size(); }
    std::size_t size() const { return d_count; }
    std::size_t capacity() const { return d_slots.size(); }

    void push(heap&& h)
    {
        d_slots[(d_head + d_count) % d_slots.size()] = std::move(h);
        d_count++;
    }
    heap pop()
    {
        heap out = std::move(d_slots[d_head]);
        d_head = (d_head + 1) % d_slots.size();
        d_count--;
        return out;
    }

private:
    std::vector<heap> d_slots;
    std::size_t d_head = 0;
    std::size_t d_count = 0;
};

} // namespace

struct stream::impl {
    explicit impl(const stream_config& config)
        : pool(detail::heap_pool::create(config.get_pool_heaps())),
          queue(config.get_queue_heaps())
    {
    }

    std::shared_ptr<detail::heap_pool> pool;

    // Guards everything below except the readers. Held while packets are assembled, so
    // the assembler's callback (enqueue) runs with it held.
    mutable std::mutex mutex;
    std::condition_variable heap_available;
    std::condition_variable space_available; //!< for wait_for_queue_space()
    std::unique_ptr<heap_assembler> assembler;
    heap_ring queue;
    recv_stats queue_stats; //!< queue drops and reader failures
    std::size_t readers_added = 0;
    std::size_t readers_finished = 0;
    std::string failure; //!< the first reader failure, cause and fix

    // Guards the reader list. Never taken by a reader thread, so stop() can hold it
    // while joining them; taken before `mutex` when both are needed.
    mutable std::mutex readers_mutex;
    std::vector<std::unique_ptr<reader>> readers;
};

stream::stream(const stream_config& config)
    : d_config(config), d_impl(std::make_unique<impl>(config))
{
    d_impl->assembler =
        std::make_unique<heap_assembler>(make_assembler_config(config),
                                         d_impl->pool,
                                         [this](heap&& h) { enqueue(std::move(h)); });
}

stream::~stream()
{
    stop();
    // Readers go before the assembler and the pool they feed.
    std::lock_guard<std::mutex> lock(d_impl->readers_mutex);
    d_impl->readers.clear();
}

void stream::add_reader(std::unique_ptr<reader> r)
{
    if (!r)
        throw std::invalid_argument("add_reader: reader is null");
    std::lock_guard<std::mutex> readers_lock(d_impl->readers_mutex);
    {
        std::lock_guard<std::mutex> lock(d_impl->mutex);
        d_impl->readers_added++;
    }
    d_impl->readers.push_back(std::move(r));
    // A reader added after the stream ended starts, finds add_packets() returning false
    // and returns; stop() or the destructor joins it.
    d_impl->readers.back()->start();
}

void stream::enqueue(heap&& h)
{
    // Called by the assembler with d_impl->mutex held.
    if (d_impl->queue.full()) {
        // Real-time data: the newest heap goes, the reader never waits for the consumer.
        d_impl->queue_stats[recv_stat::heaps_dropped_queue_full]++;
        heap dropped = std::move(h); // its storage goes back to the pool here
        return;
    }
    d_impl->queue.push(std::move(h));
    d_impl->heap_available.notify_one();
}

void stream::end_of_stream_locked()
{
    heap_assembler& assembler = *d_impl->assembler;
    if (!assembler.is_stopped())
        assembler.stop(); // flushes: live heaps are counted (or delivered) as flushed
    else if (assembler.live_heaps() != 0)
        assembler.flush();
    d_stopped.store(true);
    d_impl->heap_available.notify_all();
    d_impl->space_available.notify_all();
}

bool stream::add_packets(const packet_view* packets, std::size_t n)
{
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    heap_assembler& assembler = *d_impl->assembler;
    assembler.note_batch(n);
    // After a stop heap the assembler counts the rest of the batch in packets_after_stop.
    for (std::size_t i = 0; i < n; i++)
        assembler.add_packet(packets[i].data, packets[i].size);
    if (assembler.is_stopped() && !d_stopped.load())
        end_of_stream_locked();
    return !d_stopped.load();
}

void stream::reader_finished()
{
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    d_impl->readers_finished++;
    if (d_impl->readers_finished >= d_impl->readers_added && !d_stopped.load())
        end_of_stream_locked();
}

void stream::reader_failed(const std::string& what)
{
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    d_impl->queue_stats[recv_stat::reader_errors]++;
    if (!d_impl->failure.empty())
        return; // the stream has already ended, and said why
    d_impl->failure = what;
    gr::logger logger("spead recv_stream");
    logger.error("a reader failed: {}; the stream ends (heaps completed before the "
                 "failure are still delivered)",
                 what);
    if (!d_stopped.load())
        end_of_stream_locked();
}

bool stream::has_failed() const
{
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    return !d_impl->failure.empty();
}

std::string stream::get_failure() const
{
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    return d_impl->failure;
}

stream::pop_result stream::pop(heap& out, std::chrono::microseconds timeout)
{
    std::unique_lock<std::mutex> lock(d_impl->mutex);
    d_impl->heap_available.wait_for(
        lock, timeout, [this] { return !d_impl->queue.empty() || d_stopped.load(); });
    if (!d_impl->queue.empty()) {
        out = d_impl->queue.pop();
        d_impl->space_available.notify_one();
        return pop_result::heap;
    }
    return d_stopped.load() ? pop_result::stopped : pop_result::timeout;
}

bool stream::try_pop(heap& out)
{
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    if (d_impl->queue.empty())
        return false;
    out = d_impl->queue.pop();
    d_impl->space_available.notify_one();
    return true;
}

std::size_t stream::wait_for_queue_space(std::chrono::microseconds timeout)
{
    std::unique_lock<std::mutex> lock(d_impl->mutex);
    d_impl->space_available.wait_for(
        lock, timeout, [this] { return !d_impl->queue.full() || d_stopped.load(); });
    if (d_stopped.load())
        return 0;
    return d_impl->queue.capacity() - d_impl->queue.size();
}

void stream::stop()
{
    // End the stream first, so a batch a reader is handing over right now is counted
    // in packets_after_stop and the reader leaves its loop at once.
    {
        std::lock_guard<std::mutex> lock(d_impl->mutex);
        if (!d_stopped.load())
            end_of_stream_locked();
    }
    std::lock_guard<std::mutex> readers_lock(d_impl->readers_mutex);
    for (auto& r : d_impl->readers)
        r->join();
}

// ---- reader ----------------------------------------------------------------------

reader::~reader()
{
    // The stream joins every reader's thread before destroying it (stream::stop() in
    // ~stream): a thread still running here would be running run() of a destroyed
    // subclass.
    if (d_thread.joinable())
        std::terminate();
}

void reader::start()
{
    d_thread = std::thread([this] {
        try {
            run();
        } catch (const std::exception& e) {
            d_stream.reader_failed(e.what());
            return;
        }
        d_stream.reader_finished();
    });
}

void reader::join()
{
    d_stopping.store(true);
    wake();
    if (d_thread.joinable())
        d_thread.join();
}

bool reader::add_packets(const packet_view* packets, std::size_t n)
{
    return d_stream.add_packets(packets, n);
}

std::size_t reader::wait_for_queue_space(std::chrono::microseconds timeout)
{
    return d_stream.wait_for_queue_space(timeout);
}

recv_stats stream::get_stats() const
{
    recv_stats out;
    std::lock_guard<std::mutex> readers_lock(d_impl->readers_mutex);
    {
        std::lock_guard<std::mutex> lock(d_impl->mutex);
        out = d_impl->assembler->stats();
        out += d_impl->queue_stats;
    }
    for (const auto& r : d_impl->readers)
        out += r->transport_stats();
    return out;
}

} // namespace recv
} // namespace spead
} // namespace gr
