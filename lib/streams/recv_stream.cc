/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/chunk_assembler.h"
#include "protocol/heap_assembler.h"
#include "protocol/heap_pool.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_stream.h>
#include <condition_variable>
#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

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
    if (n > max_queue_heaps)
        throw std::invalid_argument(
            "queue_heaps: " + std::to_string(n) + " is more than " +
            std::to_string(max_queue_heaps) +
            " heaps waiting for the consumer; a queue that long only hides a consumer "
            "that does not keep up. Use at most " +
            std::to_string(max_queue_heaps) + " (0 in the block: chosen by heap size)");
    d_queue_heaps = n;
    return *this;
}

namespace {

/*! Bounds the memory a continuous stream's queue may take as the consumer falls
 * behind (chunks are allocated as first needed, up to this). */
constexpr std::size_t max_queue_memory = std::size_t(16) << 30;

/*!
 * A pause in the traffic at least this long may be a sender restarting (see
 * heap_assembler::note_pause()). Restarting a process takes longer; packets of one
 * run, a network's duplicates included, come closer together unless the sender
 * itself pauses, and then a duplicate must also be the first packet after it to be
 * taken for a restart.
 */
constexpr std::chrono::milliseconds sender_restart_gap(10);

/*! The chunk assembler of a continuous stream whose data heaps hold \p heap_bytes. */
chunk_config chunk_config_for(const continuous_config& c,
                              std::size_t heap_bytes,
                              incomplete_heaps incomplete)
{
    chunk_config out;
    out.timeline.timestamp_step =
        c.timestamp_step != 0 ? c.timestamp_step : heap_bytes / c.item_bytes;
    out.timeline.window_heaps = c.window_heaps;
    out.timeline.substreams = c.substreams;
    out.heap_bytes = heap_bytes;
    out.timestamp_item = c.timestamp_item;
    out.substream_item = c.substream_item;
    out.chunk_positions = c.chunk_positions;
    out.incomplete = incomplete;
    return out;
}

} // namespace

void continuous_config::validate() const
{
    if (timestamp_item == 0)
        throw std::invalid_argument(
            "timestamp_item: 0 names no item; a continuous stream places heaps by the "
            "immediate item holding their timestamp: give its id (e.g. 0x1600)");
    if (item_bytes == 0)
        throw std::invalid_argument("item_bytes: 0; give the bytes of one output item");
    if (queue_positions > stream_config::max_queue_heaps)
        throw std::invalid_argument(
            "queue_positions: " + std::to_string(queue_positions) + " is more than " +
            std::to_string(stream_config::max_queue_heaps) +
            " positions waiting for the consumer (queue_heaps in the block); use at "
            "most that, or 0 to size the queue by memory (queue_bytes)");
    if (queue_positions == 0 && queue_bytes == 0)
        throw std::invalid_argument(
            "queue_bytes: 0 with queue_positions 0 leaves no room for the consumer; "
            "give either");
    // The rest are the timeline's and the chunk assembler's checks, made here too so
    // a bad value shows when the stream is made, not at its first heap.
    chunk_config_for(*this, item_bytes, incomplete_heaps::drop).validate();
    if (substreams > 1 && substream_item == 0)
        throw std::invalid_argument(
            "substream_item: 0 with " + std::to_string(substreams) +
            " substreams; give the id of the immediate item naming each heap's "
            "substream (output), or use 1 substream");
}

stream_config& stream_config::set_continuous(const continuous_config& config)
{
    config.validate();
    d_continuous = true;
    d_continuous_config = config;
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
    // A continuous stream's stop heap ends only the reader it came in by (one sender
    // of several, on its own thread); the stream ends once every reader has.
    out.stop_on_stop_heap = config.get_stop_on_stop_heap() && !config.is_continuous();
    // As spead2: a stop heap that does not stop the stream is a heap like any other.
    out.deliver_stop_heaps = !config.is_continuous();
    out.validate();
    return out;
}

/*! Fixed-capacity FIFO of heaps: slots are allocated once, so queueing a heap never
 * allocates. */
class heap_ring
{
public:
    /*! Holds up to \p capacity heaps; its slots are allocated as the queue first
     * grows, so a long queue that is never used costs nothing. */
    explicit heap_ring(std::size_t capacity) : d_capacity(capacity) {}

    bool empty() const { return d_count == 0; }
    bool full() const { return d_count == d_capacity; }
    std::size_t size() const { return d_count; }
    std::size_t capacity() const { return d_capacity; }

    void push(heap&& h)
    {
        if (d_count == d_slots.size())
            grow();
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
    /*! Doubles the slots (up to the capacity), the waiting heaps first in order. */
    void grow()
    {
        std::vector<heap> slots(
            std::min(d_capacity, std::max<std::size_t>(8, 2 * d_count)));
        for (std::size_t i = 0; i < d_count; i++)
            slots[i] = std::move(d_slots[(d_head + i) % d_slots.size()]);
        d_slots = std::move(slots);
        d_head = 0;
    }

    std::size_t d_capacity;
    std::vector<heap> d_slots;
    std::size_t d_head = 0;
    std::size_t d_count = 0;
};

/*!
 * A continuous stream's chunks: free ones for the assembler, filled ones (and runs of
 * lost positions) for the consumer, in output order. Its own lock, so a consumer never
 * waits for a batch being placed; taken after the stream's when both are held. Chunks
 * are made as they are first needed, up to a bound, and reused from then on.
 */
class chunk_queue
{
public:
    /*! Sized once the heap size is known; \p max_chunks bounds the memory. */
    void configure(std::size_t positions,
                   std::size_t substreams,
                   std::size_t heap_bytes,
                   std::size_t max_chunks)
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_positions = positions;
        d_substreams = substreams;
        d_heap_bytes = heap_bytes;
        d_max_chunks = max_chunks;
        // Runs of lost positions merge, so at most one lies between two chunks.
        d_ring.resize(2 * max_chunks + 2);
    }

    /*! A free chunk; null when all are taken (the consumer is behind). */
    std::unique_ptr<chunk> acquire()
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        if (!d_free.empty()) {
            auto c = std::move(d_free.back());
            d_free.pop_back();
            return c;
        }
        if (d_allocated == d_max_chunks)
            return nullptr;
        d_allocated++;
        return std::make_unique<chunk>(d_positions, d_substreams, d_heap_bytes);
    }

    void push(chunk_entry&& e)
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        if (!e.data && d_count > 0) {
            chunk_entry& last = d_ring[(d_head + d_count - 1) % d_ring.size()];
            if (!last.data && last.first_index + last.positions == e.first_index) {
                last.positions += e.positions;
                return;
            }
        }
        d_ring[(d_head + d_count) % d_ring.size()] = std::move(e);
        d_count++;
        d_changed.notify_all();
    }

    /*! Waits up to \p timeout for an entry, or until \p stopped is set. */
    bool pop(chunk_entry& out,
             std::chrono::microseconds timeout,
             const std::atomic<bool>& stopped)
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        d_changed.wait_for(lock, timeout, [&] { return d_count > 0 || stopped.load(); });
        if (d_count == 0)
            return false;
        out = std::move(d_ring[d_head]);
        d_head = (d_head + 1) % d_ring.size();
        d_count--;
        return true;
    }

    void give_back(std::unique_ptr<chunk> c)
    {
        if (!c)
            return;
        std::lock_guard<std::mutex> lock(d_mutex);
        d_free.push_back(std::move(c));
        d_changed.notify_all();
    }

    /*! Waits up to \p timeout until \p needed chunks could be acquired; returns
     * how many could. */
    std::size_t wait_available(std::size_t needed,
                               std::chrono::microseconds timeout,
                               const std::atomic<bool>& stopped)
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        d_changed.wait_for(
            lock, timeout, [&] { return available() >= needed || stopped.load(); });
        return available();
    }

    /*! Wakes the waiters (the stream ended). */
    void wake()
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_changed.notify_all();
    }

private:
    std::size_t available() const { return d_free.size() + (d_max_chunks - d_allocated); }

    std::mutex d_mutex;
    std::condition_variable d_changed;
    std::vector<std::unique_ptr<chunk>> d_free;
    std::size_t d_allocated = 0;
    std::size_t d_max_chunks = 0;
    std::size_t d_positions = 1;
    std::size_t d_substreams = 1;
    std::size_t d_heap_bytes = 0;
    std::vector<chunk_entry> d_ring;
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

    chunk_queue chunks;                            //!< continuous streams
    std::unique_ptr<chunk_assembler> chunk_placer; //!< made at the first data heap
    recv_stats continuous_stats; //!< packets refused before reaching either assembler
    bool heap_size_warned = false;
    std::uint64_t stop_heaps_seen = 0; //!< continuous: stop heaps already acted on

    // Guards everything below except the readers. Held while packets are assembled, so
    // the assembler's callback (enqueue) runs with it held.
    mutable std::mutex mutex;
    std::condition_variable heap_available;
    std::condition_variable space_available; //!< for wait_for_queue_space()
    /*! Continuous: the last copy in flight was committed, or a drain ended. */
    std::condition_variable copies_done;
    std::size_t drain_waiters = 0; //!< threads in drain_copies_locked()
    std::unique_ptr<heap_assembler> assembler;
    heap_ring queue;
    /*! Set by enqueue(): the thread that assembled the heap wakes the consumer once
     * it releases the lock (unlock_and_wake()), so that the consumer does not wake
     * only to wait for the lock. end_of_stream_locked() wakes every consumer. */
    bool consumer_to_wake = false;
    recv_stats queue_stats; //!< queue drops and reader failures
    /*! When the last batch arrived, for noticing a sender that restarted. */
    std::chrono::steady_clock::time_point last_batch{};
    std::size_t readers_added = 0;
    /*! readers_added > 1, readable without the lock: whether a reader decodes its
     * batch before taking it. */
    std::atomic<bool> several_readers{ false };
    std::size_t readers_finished = 0;
    std::string failure; //!< the first reader failure, cause and fix

    /*! Releases \p lock (on mutex), then wakes a consumer if a heap was queued. */
    void unlock_and_wake(std::unique_lock<std::mutex>& lock)
    {
        const bool wake = std::exchange(consumer_to_wake, false);
        lock.unlock();
        if (wake)
            heap_available.notify_one();
    }

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
        d_impl->several_readers.store(d_impl->readers_added > 1);
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
    d_impl->consumer_to_wake = true;
}

void stream::end_of_stream_locked(std::unique_lock<std::mutex>& lock)
{
    // Copies other readers are making go in before the positions are flushed.
    drain_copies_locked(lock);
    if (d_stopped.load())
        return; // ended while this thread waited
    heap_assembler& assembler = *d_impl->assembler;
    if (!assembler.is_stopped())
        assembler.stop(); // flushes: live heaps are counted (or delivered) as flushed
    else if (assembler.live_heaps() != 0)
        assembler.flush();
    if (d_impl->chunk_placer)
        d_impl->chunk_placer->flush(); // the positions still filling go out
    d_stopped.store(true);
    d_impl->consumer_to_wake = false;
    d_impl->heap_available.notify_all();
    d_impl->space_available.notify_all();
    d_impl->chunks.wake();
}

void stream::drain_copies_locked(std::unique_lock<std::mutex>& lock)
{
    chunk_assembler* placer = d_impl->chunk_placer.get();
    if (!placer || placer->copies_in_flight() == 0)
        return;
    d_impl->drain_waiters++;
    d_impl->copies_done.wait(lock, [placer] { return placer->copies_in_flight() == 0; });
    d_impl->drain_waiters--;
    d_impl->copies_done.notify_all(); // readers held back before reserving
}

void stream::note_batch_locked(std::size_t n)
{
    const auto now = std::chrono::steady_clock::now();
    if (now - d_impl->last_batch >= sender_restart_gap)
        d_impl->assembler->note_pause();
    d_impl->last_batch = now;
    d_impl->assembler->note_batch(n);
}

bool stream::add_packets(const packet_view* packets, std::size_t n)
{
    if (d_config.is_continuous())
        return add_continuous(packets, n);
    std::unique_lock<std::mutex> lock(d_impl->mutex);
    heap_assembler& assembler = *d_impl->assembler;
    note_batch_locked(n);
    // After a stop heap the assembler counts the rest of the batch in
    // packets_after_stop.
    for (std::size_t i = 0; i < n; i++)
        assembler.add_packet(packets[i].data, packets[i].size);
    if (assembler.is_stopped() && !d_stopped.load())
        end_of_stream_locked(lock);
    const bool open = !d_stopped.load();
    d_impl->unlock_and_wake(lock);
    return open;
}

namespace {
/*! A reader thread's batch: decoded before the stream's lock is taken, and the copies
 * to make once it is released. Kept from batch to batch, so nothing is allocated in
 * the steady state. */
struct placing_batch {
    std::vector<packet_header> headers;
    std::vector<decode_result> results;
    std::vector<chunk_assembler::copy_ticket> copies;
};
} // namespace

bool stream::add_continuous(const packet_view* packets, std::size_t n)
{
    thread_local placing_batch batch;
    batch.headers.resize(n);
    batch.results.resize(n);
    // With several readers each decodes its batch before taking the lock, in parallel
    // with the others. A lone reader decodes under it, and only the packets that
    // add_repeat() does not place without decoding (spead_bench mem --continuous).
    const bool decoded = d_impl->several_readers.load();
    for (std::size_t i = 0; decoded && i < n; i++)
        batch.results[i] =
            decode_packet(packets[i].data, packets[i].size, batch.headers[i]);

    heap_assembler& assembler = *d_impl->assembler;
    const bool stop_on_stop_heap = d_config.get_stop_on_stop_heap();
    // The stop heaps it counted: a change after this thread's packet is this
    // reader's sender saying stop (checked under the same hold of the lock).
    const auto stop_heap_came = [&] {
        const std::uint64_t seen = assembler.stats()[recv_stat::stop_heaps];
        if (!stop_on_stop_heap || seen == d_impl->stop_heaps_seen)
            return false;
        d_impl->stop_heaps_seen = seen;
        return true;
    };
    std::unique_lock<std::mutex> lock(d_impl->mutex);
    note_batch_locked(n);
    const bool alone = d_impl->readers_added <= 1;
    bool reader_goes_on = true;
    bool offer_again = false; // packet i waited for a drain: place it before others
    std::size_t i = 0;
    while (i < n) {
        if (!offer_again)
            d_impl->copies_done.wait(lock, [this] { return d_impl->drain_waiters == 0; });
        offer_again = false;
        bool drain = false;
        batch.copies.clear();
        for (; i < n; i++) {
            if (d_stopped.load()) {
                assembler.add_packet(packets[i].data, packets[i].size); // after stop
                continue;
            }
            if (!decoded) {
                if (alone && d_impl->chunk_placer &&
                    d_impl->chunk_placer->add_repeat(packets[i].data, packets[i].size))
                    continue;
                batch.results[i] =
                    decode_packet(packets[i].data, packets[i].size, batch.headers[i]);
            }
            if (batch.results[i] != decode_result::ok) {
                d_impl->continuous_stats[stat_for(batch.results[i])]++;
                continue;
            }
            const packet_header& packet = batch.headers[i];
            chunk_assembler::result placed = chunk_assembler::result::other;
            if (d_impl->chunk_placer || make_chunk_placer_locked(lock, packet)) {
                if (!d_impl->chunk_placer)
                    continue; // refused while learning the heap size, or failed: counted
                chunk_assembler::copy_ticket copy;
                // One reader has no one to copy in parallel with: it copies in place,
                // which is cheaper than a ticket (spead_bench mem --continuous).
                placed = alone ? d_impl->chunk_placer->add_packet(packet)
                               : d_impl->chunk_placer->reserve(packet, copy);
                if (placed == chunk_assembler::result::copy)
                    batch.copies.push_back(copy);
                if (placed == chunk_assembler::result::drain) {
                    drain = true;
                    break; // offered again once no copy is in flight
                }
            }
            if (placed != chunk_assembler::result::other)
                continue;
            assembler.add_decoded(packet); // descriptors, stream control
            if (stop_heap_came()) {
                // This reader's sender said stop: the rest of its batch comes after it.
                d_impl->continuous_stats[recv_stat::packets_after_stop] += n - i - 1;
                reader_goes_on = false;
                i = n;
                break;
            }
        }
        if (!batch.copies.empty()) {
            // Each copy's place is its own until committed: other readers place (and
            // copy) meanwhile.
            lock.unlock();
            for (const chunk_assembler::copy_ticket& c : batch.copies)
                std::memcpy(c.to, c.from, c.bytes);
            lock.lock();
            chunk_assembler& placer = *d_impl->chunk_placer;
            for (const chunk_assembler::copy_ticket& c : batch.copies)
                placer.commit(c);
            if (placer.copies_in_flight() == 0)
                d_impl->copies_done.notify_all();
        }
        if (drain) {
            drain_copies_locked(lock);
            offer_again = true;
        }
    }
    const bool goes_on = reader_goes_on && !d_stopped.load();
    d_impl->unlock_and_wake(lock); // control heaps (descriptors) go to the heap queue
    return goes_on;
}

bool stream::make_chunk_placer_locked(std::unique_lock<std::mutex>& lock,
                                      const packet_header& packet)
{
    const continuous_config& c = d_config.get_continuous();
    std::uint64_t timestamp = 0;
    if (!chunk_assembler::find_immediate(packet, c.timestamp_item, timestamp))
        return false;
    if (!packet.has_heap_size || packet.heap_size == 0 ||
        packet.heap_size > d_config.get_max_heap_size()) {
        // A data heap that cannot set the stream's shape: counted like any heap of
        // the wrong size; the next data heap may.
        d_impl->continuous_stats[recv_stat::packets_refused_heap]++;
        if (!d_impl->heap_size_warned) {
            d_impl->heap_size_warned = true;
            gr::logger logger("spead recv_stream");
            logger.warn("a data heap (cnt {}) has {}; a continuous stream needs each "
                        "data heap to carry HEAP_SIZE, at most max_heap_size ({} "
                        "bytes): its packets are dropped (packets_refused_heap)",
                        packet.heap_cnt,
                        packet.has_heap_size
                            ? "HEAP_SIZE " + std::to_string(packet.heap_size)
                            : std::string("no HEAP_SIZE"),
                        d_config.get_max_heap_size());
        }
        return true; // handled: counted
    }
    const std::size_t heap_bytes = std::size_t(packet.heap_size);
    if (heap_bytes % c.item_bytes != 0) {
        d_impl->continuous_stats[recv_stat::packets_refused_heap]++;
        fail_locked(lock,
                    "the data heaps hold " + std::to_string(heap_bytes) +
                        " bytes, not a whole number of " + std::to_string(c.item_bytes) +
                        "-byte output items; set item_type and vlen so that one item "
                        "divides the heap (or send heaps of whole items)");
        return true;
    }
    const chunk_config config =
        chunk_config_for(c, heap_bytes, d_config.get_incomplete_heaps());
    try {
        config.validate();
    } catch (const std::invalid_argument& e) {
        d_impl->continuous_stats[recv_stat::packets_refused_heap]++;
        fail_locked(lock,
                    std::string("the first data heap's size does not fit: ") + e.what());
        return true;
    }
    const std::size_t positions = config.positions_per_chunk();
    const std::size_t chunk_bytes = positions * c.substreams * heap_bytes;
    const std::size_t queued =
        c.queue_positions != 0 ? (c.queue_positions + positions - 1) / positions
                               : std::max<std::size_t>(2, c.queue_bytes / chunk_bytes);
    if (queued > max_queue_memory / chunk_bytes) {
        d_impl->continuous_stats[recv_stat::packets_refused_heap]++;
        fail_locked(lock,
                    "queue_positions (queue_heaps in the block): " +
                        std::to_string(c.queue_positions) + " positions of " +
                        std::to_string(c.substreams * heap_bytes) +
                        " bytes are more than " + std::to_string(max_queue_memory >> 30) +
                        " GiB waiting for the consumer; give fewer, or 0 to size the "
                        "queue by memory");
        return true;
    }
    d_impl->chunks.configure(
        positions, c.substreams, heap_bytes, config.live_chunks() + queued);
    d_impl->chunk_placer = std::make_unique<chunk_assembler>(
        config,
        [this] { return d_impl->chunks.acquire(); },
        [this](chunk_entry&& e) { d_impl->chunks.push(std::move(e)); });
    d_heap_bytes.store(heap_bytes);
    return true;
}

void stream::fail_locked(std::unique_lock<std::mutex>& lock, const std::string& what)
{
    if (!d_impl->failure.empty())
        return; // the stream has already ended, and said why
    d_impl->failure = what;
    gr::logger logger("spead recv_stream");
    logger.error("the stream ends: {}", what);
    if (!d_stopped.load())
        end_of_stream_locked(lock);
}

stream::pop_result stream::pop_chunk(chunk_entry& out, std::chrono::microseconds timeout)
{
    if (d_impl->chunks.pop(out, timeout, d_stopped))
        return pop_result::heap;
    // Stopped is set after the last chunk went in: one more look finds it.
    if (d_stopped.load())
        return d_impl->chunks.pop(out, std::chrono::microseconds(0), d_stopped)
                   ? pop_result::heap
                   : pop_result::stopped;
    return pop_result::timeout;
}

bool stream::try_pop_chunk(chunk_entry& out)
{
    return d_impl->chunks.pop(out, std::chrono::microseconds(0), d_stopped);
}

void stream::return_chunk(std::unique_ptr<chunk> c)
{
    d_impl->chunks.give_back(std::move(c));
}

void stream::reader_finished()
{
    std::unique_lock<std::mutex> lock(d_impl->mutex);
    d_impl->readers_finished++;
    if (d_impl->readers_finished >= d_impl->readers_added && !d_stopped.load())
        end_of_stream_locked(lock);
}

void stream::reader_failed(const std::string& what)
{
    std::unique_lock<std::mutex> lock(d_impl->mutex);
    d_impl->queue_stats[recv_stat::reader_errors]++;
    if (!d_impl->failure.empty())
        return; // the stream has already ended, and said why
    d_impl->failure = what;
    gr::logger logger("spead recv_stream");
    logger.error("a reader failed: {}; the stream ends (heaps completed before the "
                 "failure are still delivered)",
                 what);
    if (!d_stopped.load())
        end_of_stream_locked(lock);
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
    if (d_config.is_continuous()) {
        std::size_t live = 0;
        {
            std::lock_guard<std::mutex> lock(d_impl->mutex);
            if (d_stopped.load())
                return 0;
            if (!d_impl->chunk_placer)
                return 2; // one packet at a time until the stream knows its shape
            live = d_impl->chunk_placer->config().live_chunks();
        }
        // One packet may hand on, and ask for, at most the chunks the window spans:
        // a batch of free / (2 × that) packets never finds none free.
        const std::size_t free = d_impl->chunks.wait_available(live, timeout, d_stopped);
        return d_stopped.load() ? 0 : 2 * (free / live);
    }
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
        std::unique_lock<std::mutex> lock(d_impl->mutex);
        if (!d_stopped.load())
            end_of_stream_locked(lock);
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
        if (d_config.is_continuous()) {
            // The heap assembler sees only the control heaps there: `heaps` counts
            // the data heaps placed, so positions reconcile with it.
            out[recv_stat::control_heaps] = out[recv_stat::heaps];
            out[recv_stat::heaps] = 0;
        }
        out += d_impl->queue_stats;
        out += d_impl->continuous_stats;
        if (d_impl->chunk_placer)
            out += d_impl->chunk_placer->stats();
    }
    for (const auto& r : d_impl->readers)
        out += r->transport_stats();
    return out;
}

} // namespace recv
} // namespace spead
} // namespace gr
