/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "chunk_placement.h"
#include "protocol/payload_copy.h"
#include <gnuradio/logger.h>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace recv {

namespace {
/*! Bounds the memory a continuous stream's queue may take as the consumer falls
 * behind (chunks are allocated as first needed, up to this). */
constexpr std::size_t max_queue_memory = std::size_t(16) << 30;
} // namespace

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
    out.first_substream = c.first_substream;
    out.substream_ids = c.substream_ids;
    out.chunk_positions = c.chunk_positions;
    out.incomplete = incomplete;
    return out;
}

/*! Kept per reader thread from batch to batch, so nothing is allocated in the steady
 * state. */
struct chunk_placement::batch {
    /*! A payload copy to make outside the lock: packets [first, first + ticket.packets)
     * of the batch, in one ticket (chunk_assembler::extend()). */
    struct copy {
        chunk_assembler::copy_ticket ticket;
        std::size_t first = 0;
    };
    std::vector<packet_header> headers;
    std::vector<decode_result> results;
    /*! Packets after each that continue it (chunk_assembler::continues()). */
    std::vector<std::uint32_t> follow;
    std::vector<copy> copies;
    bool decoded = false; //!< decode_all() ran: headers and results hold every packet
    bool alone = false;   //!< one reader: copies in place, tries add_repeat() first
};

chunk_placement::chunk_placement(stream_core& core, const stream_config& config)
    : placement(core), d_config(config), d_control(core, config)
{
}

void chunk_placement::decode_all(batch& b, const packet_view* packets, std::size_t n)
{
    for (std::size_t i = 0; i < n; i++)
        b.results[i] = decode_packet(packets[i].data, packets[i].size, b.headers[i]);
    // The runs of one heap's packets, found here, outside the lock.
    for (std::size_t i = n; i-- > 0;)
        b.follow[i] = i + 1 < n && b.results[i] == decode_result::ok &&
                              b.results[i + 1] == decode_result::ok &&
                              chunk_assembler::continues(b.headers[i], b.headers[i + 1])
                          ? b.follow[i + 1] + 1
                          : 0;
}

bool chunk_placement::add_batch(const packet_view* packets,
                                std::size_t n,
                                std::size_t source)
{
    thread_local batch b;
    b.headers.resize(n);
    b.results.resize(n);
    b.follow.resize(n);
    // With several readers each decodes its batch before taking the lock, in parallel
    // with the others. A lone reader decodes under it, and only the packets that
    // add_repeat() does not place without decoding (spead_bench mem --continuous).
    b.decoded = d_core.several_readers.load();
    if (b.decoded)
        decode_all(b, packets, n);

    std::unique_lock<std::mutex> lock(d_core.mutex, std::defer_lock);
    d_profile.acquire(lock);
    d_control.note_batch_locked(n, source);
    b.alone = d_core.readers_added <= 1;
    bool reader_goes_on = true;
    bool offer_again = false; // the packet at i waited for a drain: it goes first
    std::size_t i = 0;
    while (i < n) {
        if (!offer_again)
            wait_for_drainers(lock);
        const std::size_t from = i;
        const run_end end = place_run(lock, b, packets, n, source, i);
        d_profile.placed(i - from, b.copies.size());
        copy_and_commit(lock, b);
        offer_again = end == run_end::drain;
        if (offer_again)
            drain_locked(lock);
        if (end == run_end::reader_ends)
            reader_goes_on = false;
    }
    const bool goes_on = reader_goes_on && !d_core.stopped.load();
    d_profile.release();
    d_control.unlock_and_wake(lock); // control heaps (descriptors) go to the heap queue
    d_chunks.wake_consumer();        // a chunk handed on above, now the lock is free
    return goes_on;
}

void chunk_placement::wait_for_drainers(std::unique_lock<std::mutex>& lock)
{
    d_copies_done.wait(lock, [this] { return d_drain_waiters == 0; });
}

chunk_placement::run_end chunk_placement::place_run(std::unique_lock<std::mutex>& lock,
                                                    batch& b,
                                                    const packet_view* packets,
                                                    std::size_t n,
                                                    std::size_t source,
                                                    std::size_t& i)
{
    // The source's own: a connection's control heaps are assembled apart from the
    // others' (under this hold of the lock; another thread may have placed meanwhile).
    heap_assembler& control = d_control.assembler(source);
    std::uint64_t stop_heaps_seen = control.stats()[recv_stat::stop_heaps];
    b.copies.clear();
    for (; i < n; i++) {
        if (d_core.stopped.load()) {
            control.add_packet(packets[i].data, packets[i].size); // after stop
            continue;
        }
        if (!b.decoded) {
            if (b.alone && d_assembler &&
                d_assembler->add_repeat(packets[i].data, packets[i].size))
                continue;
            b.results[i] = decode_packet(packets[i].data, packets[i].size, b.headers[i]);
        }
        if (b.results[i] != decode_result::ok) {
            d_stats[stat_for(b.results[i])]++;
            continue;
        }
        const packet_header& packet = b.headers[i];
        if (d_assembler || make_assembler_locked(lock, packet)) {
            if (!d_assembler)
                continue; // refused while learning the heap size, or failed: counted
            chunk_assembler::copy_ticket copy;
            // One reader has no one to copy in parallel with: it copies in place,
            // which is cheaper than a ticket (spead_bench mem --continuous).
            const chunk_assembler::result placed =
                b.alone ? d_assembler->add_packet(packet)
                        : d_assembler->reserve(packet, copy);
            if (placed == chunk_assembler::result::copy) {
                b.copies.push_back({ copy, i });
                // The packets after it that continue its heap join its ticket: under
                // the lock, a run costs little more than its first packet.
                const std::size_t more = b.decoded ? b.follow[i] : 0;
                if (more != 0 &&
                    d_assembler->extend(b.copies.back().ticket, &b.headers[i + 1], more))
                    i += more;
            }
            if (placed == chunk_assembler::result::drain)
                return run_end::drain; // offered again once no copy is in flight
            if (placed != chunk_assembler::result::other)
                continue;
        }
        control.add_decoded(packet); // descriptors, stream control
        if (stop_heap_came(control, stop_heaps_seen)) {
            // This reader's sender said stop: the rest of its batch comes after it.
            d_stats[recv_stat::packets_after_stop] += n - i - 1;
            i = n;
            return run_end::reader_ends;
        }
    }
    return run_end::batch_done;
}

void chunk_placement::copy_and_commit(std::unique_lock<std::mutex>& lock, batch& b)
{
    if (b.copies.empty())
        return;
    // Each copy's place is its own until committed: other readers place (and copy)
    // meanwhile.
    d_profile.release();
    lock.unlock();
    const bool nontemporal = d_assembler->config().nontemporal_copies;
    for (const batch::copy& c : b.copies) {
        const std::uint64_t base = b.headers[c.first].payload_offset;
        for (std::size_t k = c.first; k < c.first + c.ticket.packets; k++)
            copy_payload(nontemporal,
                         c.ticket.to + (b.headers[k].payload_offset - base),
                         b.headers[k].payload,
                         std::size_t(b.headers[k].payload_length));
    }
    d_profile.acquire(lock);
    for (const batch::copy& c : b.copies)
        d_assembler->commit(c.ticket);
    if (d_assembler->copies_in_flight() == 0)
        d_copies_done.notify_all();
}

bool chunk_placement::stop_heap_came(const heap_assembler& control,
                                     std::uint64_t& stop_heaps_seen) const
{
    // Checked under the same hold of the lock as the packet that went to the control
    // assembler, so a change is this thread's packet's doing.
    const std::uint64_t seen = control.stats()[recv_stat::stop_heaps];
    if (!d_config.get_stop_on_stop_heap() || seen == stop_heaps_seen)
        return false;
    stop_heaps_seen = seen;
    return true;
}

void chunk_placement::end_source(std::size_t source) { d_control.end_source(source); }

void chunk_placement::drain_locked(std::unique_lock<std::mutex>& lock)
{
    chunk_assembler* assembler = d_assembler.get();
    if (!assembler || assembler->copies_in_flight() == 0)
        return;
    d_drain_waiters++;
    d_copies_done.wait(lock, [assembler] { return assembler->copies_in_flight() == 0; });
    d_drain_waiters--;
    d_copies_done.notify_all(); // readers held back before reserving
}

void chunk_placement::refuse_shape(const packet_header& packet)
{
    d_stats[recv_stat::packets_refused_heap]++;
    if (d_heap_size_warned)
        return;
    d_heap_size_warned = true;
    gr::logger logger("spead recv_stream");
    logger.warn("a data heap (cnt {}) has {}; a continuous stream needs each "
                "data heap to carry HEAP_SIZE, at most max_heap_size ({} "
                "bytes): its packets are dropped (packets_refused_heap)",
                packet.heap_cnt,
                packet.has_heap_size ? "HEAP_SIZE " + std::to_string(packet.heap_size)
                                     : std::string("no HEAP_SIZE"),
                d_config.get_max_heap_size());
}

bool chunk_placement::make_assembler_locked(std::unique_lock<std::mutex>& lock,
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
        refuse_shape(packet);
        return true; // handled: counted
    }
    const auto fail = [&](const std::string& what) {
        d_stats[recv_stat::packets_refused_heap]++;
        d_core.fail_locked(lock, what, "the stream ends: " + what);
        return true;
    };
    const std::size_t heap_bytes = std::size_t(packet.heap_size);
    if (heap_bytes % c.item_bytes != 0)
        return fail("the data heaps hold " + std::to_string(heap_bytes) +
                    " bytes, not a whole number of " + std::to_string(c.item_bytes) +
                    "-byte output items; set item_type and vlen so that one item "
                    "divides the heap (or send heaps of whole items)");
    chunk_config config =
        chunk_config_for(c, heap_bytes, d_config.get_incomplete_heaps());
    config.nontemporal_copies = d_config.get_memcpy() == memcpy_function::nontemporal;
    try {
        config.validate();
    } catch (const std::invalid_argument& e) {
        return fail(std::string("the first data heap's size does not fit: ") + e.what());
    }
    const std::size_t positions = config.positions_per_chunk();
    const std::size_t chunk_bytes = positions * c.substreams * heap_bytes;
    const std::size_t queued =
        c.queue_positions != 0 ? (c.queue_positions + positions - 1) / positions
                               : std::max<std::size_t>(2, c.queue_bytes / chunk_bytes);
    if (queued > max_queue_memory / chunk_bytes)
        return fail("queue_positions (queue_heaps in the block): " +
                    std::to_string(c.queue_positions) + " positions of " +
                    std::to_string(c.substreams * heap_bytes) + " bytes are more than " +
                    std::to_string(max_queue_memory >> 30) +
                    " GiB waiting for the consumer; give fewer, or 0 to size the "
                    "queue by memory");
    d_chunks.configure(
        positions, c.substreams, heap_bytes, config.live_chunks() + queued);
    d_assembler = std::make_unique<chunk_assembler>(
        config,
        [this] { return d_chunks.acquire(); },
        [this](chunk_entry&& e) { d_chunks.push(std::move(e)); });
    d_heap_bytes.store(heap_bytes);
    d_live_chunks.store(config.live_chunks());
    return true;
}

void chunk_placement::flush_locked()
{
    d_control.flush_locked();
    if (d_assembler)
        d_assembler->flush(); // the positions still filling go out
}

void chunk_placement::wake_all_locked()
{
    d_control.wake_all_locked();
    d_chunks.wake();
}

std::size_t chunk_placement::wait_for_queue_space(std::chrono::microseconds timeout)
{
    // Without the stream's lock: a reader asks before each batch (mem_reader,
    // pcap_reader), and the lock is what the readers contend for.
    if (d_core.stopped.load())
        return 0;
    const std::size_t live = d_live_chunks.load();
    if (live == 0)
        return 2; // one packet at a time until the stream knows its shape
    // One packet may hand on, and ask for, at most the chunks the window spans: a
    // batch of free / (2 × that) packets never finds none free.
    const std::size_t free = d_chunks.wait_available(live, timeout, d_core.stopped);
    return d_core.stopped.load() ? 0 : 2 * (free / live);
}

void chunk_placement::add_stats_locked(recv_stats& out) const
{
    d_control.add_stats_locked(out);
    out += d_stats;
    if (d_assembler)
        out += d_assembler->stats();
}

} // namespace recv
} // namespace spead
} // namespace gr
