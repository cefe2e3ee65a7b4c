/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_CHUNK_QUEUE_H
#define INCLUDED_SPEAD_STREAMS_CHUNK_QUEUE_H

#include "ring_fifo.h"
#include <gnuradio/spead/recv_chunk.h>
#include <condition_variable>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief A continuous stream's chunks: free ones for the chunk assembler, filled ones
 * (and runs of lost positions) for the consumer, in output order.
 *
 * Its own lock, so a consumer never waits for a batch being placed; taken after the
 * stream's when both are held (docs/dev-recv-locking.md). Chunks are made as they are
 * first needed, up to a bound, and reused from then on. Waiters are notified after the
 * lock is released, and only when there are any, so a woken thread does not block on
 * the lock its waker still holds; the consumer only once the pusher has released the
 * stream's lock too (wake_consumer()), since on a machine whose cores are all busy
 * with readers the woken consumer takes the core of the one that woke it.
 */
class chunk_queue
{
public:
    /*! Sized once the heap size is known; \p max_chunks bounds the memory. */
    void configure(std::size_t positions,
                   std::size_t substreams,
                   std::size_t heap_bytes,
                   std::size_t max_chunks);

    /*! A free chunk; null when all are taken (the consumer is behind). */
    std::unique_ptr<chunk> acquire();
    /*! A filled chunk or a run of lost positions (merged with the run before it). A
     * waiting consumer is woken by the next wake_consumer() (or wake()), which the
     * pusher calls once it has released the stream's lock. */
    void push(chunk_entry&& e);
    /*! Wakes the consumer if a push() since the last call found it waiting. */
    void wake_consumer();
    /*! Waits up to \p timeout for an entry, or until \p stopped is set. */
    bool pop(chunk_entry& out,
             std::chrono::microseconds timeout,
             const std::atomic<bool>& stopped);
    /*! A chunk popped and copied out: free again. */
    void give_back(std::unique_ptr<chunk> c);
    /*! Waits up to \p timeout until \p needed chunks could be acquired; returns
     * how many could. */
    std::size_t wait_available(std::size_t needed,
                               std::chrono::microseconds timeout,
                               const std::atomic<bool>& stopped);
    /*! Wakes the waiters (the stream ended). */
    void wake();

private:
    std::size_t available() const { return d_free.size() + (d_max_chunks - d_allocated); }
    /*! After a change to the free chunks, with d_mutex held: the atomic copy. */
    void note_available_locked() { d_available.store(available()); }

    std::mutex d_mutex;
    std::condition_variable d_ready_changed; //!< the consumer waits in pop()
    std::condition_variable d_free_changed;  //!< readers wait in wait_available()
    std::size_t d_pop_waiters = 0;           //!< notified only when someone waits
    std::size_t d_free_waiters = 0;
    std::vector<std::unique_ptr<chunk>> d_free;
    std::size_t d_allocated = 0;
    std::size_t d_max_chunks = 0;
    std::size_t d_positions = 1;
    std::size_t d_substreams = 1;
    std::size_t d_heap_bytes = 0;
    ring_fifo<chunk_entry> d_ready; //!< for the consumer, in output order
    /*! available(), read by wait_available() without the lock: readers ask before each
     * batch, and most find room at once. Its own cache line, apart from the mutex. */
    alignas(64) std::atomic<std::size_t> d_available{ 0 };
    /*! A push() found the consumer waiting: wake_consumer() notifies it. */
    std::atomic<bool> d_wake_pending{ false };
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_CHUNK_QUEUE_H */
