/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_HEAP_PLACEMENT_H
#define INCLUDED_SPEAD_STREAMS_HEAP_PLACEMENT_H

#include "heap_queue.h"
#include "placement.h"
#include "protocol/heap_assembler.h"
#include "protocol/heap_pool.h"
#include <gnuradio/spead/recv_stream_config.h>
#include <condition_variable>
#include <chrono>
#include <memory>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*! The heap assembler's settings of a stream's \p config (both placements assemble
 * heaps: whole ones here, into chunks in chunk_ring_placement). */
assembler_config assembler_config_for(const stream_config& config);

/*!
 * \brief Heap placement: packets assembled into whole heaps (heap_assembler), which
 * wait for the consumer in a bounded heap queue. A continuous stream's chunk
 * placement hands it the packets of the heaps it does not place (control heaps).
 */
class heap_placement final : public placement
{
public:
    heap_placement(stream_core& core, const stream_config& config);

    bool
    add_batch(const packet_view* packets, std::size_t n, std::size_t source) override;
    void end_source(std::size_t source) override;
    void flush_locked() override;
    void wake_all_locked() override;
    std::size_t wait_for_queue_space(std::chrono::microseconds timeout) override;
    void add_stats_locked(recv_stats& out) const override;
    heap_placement& heaps() override { return *this; }
    /*! Heaps waiting for the consumer (mutex held). */
    std::size_t queued_locked() const { return d_queue.size(); }

    /*! Counts a batch of \p n of \p source's and notes a pause before it (a sender
     * may have restarted) (mutex held). */
    void note_batch_locked(std::size_t n, std::size_t source);
    /*! \p source's assembler, made at its first batch (mutex held). Each source
     * (a connection) has its own: its own heap cnts and its own max_heaps. */
    heap_assembler& assembler(std::size_t source)
    {
        if (source < d_assemblers.size() && d_assemblers[source])
            return *d_assemblers[source];
        return add_assembler(source);
    }
    /*! Releases \p lock, then wakes a consumer if a heap was queued meanwhile: the
     * consumer does not wake only to wait for the lock. */
    void unlock_and_wake(std::unique_lock<std::mutex>& lock)
    {
        const bool wake = std::exchange(d_consumer_to_wake, false);
        lock.unlock();
        if (wake)
            d_heap_available.notify_one();
    }

    /*! See stream::pop() and stream::try_pop(). False: no heap within \p timeout;
     * \p stopped then says whether the stream had ended, as seen under the lock (so
     * no heap can have come after). */
    bool pop(heap& out, std::chrono::microseconds timeout, bool& stopped);
    bool try_pop(heap& out);

private:
    /*! The assembler's callback (mutex held): queues \p h, or drops it when full. */
    void enqueue(heap&& h);
    /*! Policy block: the queue has room for whatever \p packets can complete (mutex
     * held). The common case, checked once per batch. */
    bool room_for_locked(std::size_t packets) const;
    /*! Policy block: waits (releasing \p lock) until the queue has room for what the
     * next packet can complete, or the stream or its assembler has stopped. */
    void wait_for_room_locked(std::unique_lock<std::mutex>& lock, heap_assembler& a);
    /*! Makes \p source's assembler (mutex held): once per source, not per batch. */
    heap_assembler& add_assembler(std::size_t source);

    std::shared_ptr<detail::heap_pool> d_pool;
    const assembler_config d_assembler_config;
    /*! By source; 0 (every reader's) always exists. */
    std::vector<std::unique_ptr<heap_assembler>> d_assemblers;
    recv_stats d_ended_stats; //!< of the assemblers of sources that ended
    heap_queue d_queue;
    const bool d_block; //!< full_queue_policy::block: network readers wait for room
    const std::size_t d_heaps_per_packet;      //!< most heaps one packet can queue
    std::condition_variable d_heap_available;  //!< pop() waits on it
    std::condition_variable d_space_available; //!< wait_for_queue_space() waits on it
    /*! Set by enqueue(): the thread that assembled the heap wakes the consumer once
     * it releases the lock (unlock_and_wake()). */
    bool d_consumer_to_wake = false;
    recv_stats d_stats; //!< heaps_dropped_queue_full, reader_waits_queue_full
    /*! A lossless reader found the queue full and has not found room since. */
    bool d_lossless_waiting = false;
    /*! When the last batch arrived, for noticing a sender that restarted. */
    std::chrono::steady_clock::time_point d_last_batch{};
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_HEAP_PLACEMENT_H */
