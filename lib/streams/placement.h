/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_PLACEMENT_H
#define INCLUDED_SPEAD_STREAMS_PLACEMENT_H

#include <gnuradio/spead/recv_reader.h>
#include <gnuradio/spead/stats.h>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace gr {
namespace spead {
namespace recv {

class placement;
class heap_placement;
class chunk_queue;

/*!
 * \brief What a receive stream shares with its placement: the stream's lock, whether
 * it has ended and why, and how many readers feed it (docs/dev-recv-locking.md).
 */
struct stream_core {
    /*! Guards everything of the stream and its placement except the reader list and
     * the chunk queue. Held while packets are placed. */
    mutable std::mutex mutex;
    /*! Set once, under mutex; read without it. */
    std::atomic<bool> stopped{ false };
    std::string failure;           //!< the first failure, cause and fix (mutex)
    recv_stats errors;             //!< reader_errors (mutex)
    std::size_t readers_added = 0; //!< (mutex)
    std::size_t readers_finished = 0;
    /*! readers_added > 1, readable without the lock. */
    std::atomic<bool> several_readers{ false };
    placement* placing = nullptr; //!< the stream's placement, set once
    /*! Sources handed out so far (mutex): 0 is every reader's, the rest are
     * reserve_sources()'s (a connected reader's connections). */
    std::size_t sources = 1;

    /*! Ends the stream (mutex held through \p lock; idempotent): the placement
     * drains the copies in flight and flushes, then consumers are woken. */
    void end_locked(std::unique_lock<std::mutex>& lock);
    /*! Ends the stream for \p what (cause and fix); the first failure alone is kept,
     * and logged as \p message. */
    void fail_locked(std::unique_lock<std::mutex>& lock,
                     const std::string& what,
                     const std::string& message);
};

/*!
 * \brief Where a stream's packets go once a reader hands them over: heap placement
 * (whole heaps to a heap queue) or chunk placement (data heaps by timestamp into
 * chunks, the rest as heaps). The stream calls it once per batch, never per packet.
 */
class placement
{
public:
    explicit placement(stream_core& core) : d_core(core) {}
    virtual ~placement() = default;
    placement(const placement&) = delete;
    placement& operator=(const placement&) = delete;

    /*! A reader's batch, from its thread: takes the stream's lock and places every
     * packet. False once that reader should end (the stream ended, or its sender
     * sent a stop heap). \p source: whose heaps they are (0, or a connection's own
     * source: its own heap cnts, assembled apart from the others'). */
    virtual bool
    add_batch(const packet_view* packets, std::size_t n, std::size_t source) = 0;
    /*! Source \p source's sender has gone (takes the stream's lock): its partial heaps
     * are flushed, and its next sender starts afresh. */
    virtual void end_source(std::size_t source) { (void)source; }
    /*! Waits (mutex held) until no copy made outside the lock is in flight. */
    virtual void drain_locked(std::unique_lock<std::mutex>& lock) { (void)lock; }
    /*! End of stream (mutex held, no copies in flight): flushes what is live. */
    virtual void flush_locked() = 0;
    /*! The stream ended: wakes every consumer and waiting reader. */
    virtual void wake_all_locked() = 0;
    /*! See reader::wait_for_queue_space(). */
    virtual std::size_t wait_for_queue_space(std::chrono::microseconds timeout) = 0;
    /*! Adds this placement's counters to \p out (mutex held). */
    virtual void add_stats_locked(recv_stats& out) const = 0;
    /*! Where heaps go (every stream pops heaps: in a continuous one, control heaps). */
    virtual heap_placement& heaps() = 0;
    /*! Where chunks go; null when the stream places no chunks. */
    virtual chunk_queue* chunks() { return nullptr; }
    /*! Data heap bytes (continuous streams, once the first data heap came; else 0). */
    virtual std::size_t heap_bytes() const { return 0; }

protected:
    stream_core& d_core;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_PLACEMENT_H */
