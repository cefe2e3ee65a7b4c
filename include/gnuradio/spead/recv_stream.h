/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_STREAM_H
#define INCLUDED_SPEAD_RECV_STREAM_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_chunk.h>
#include <gnuradio/spead/recv_heap.h>
#include <gnuradio/spead/recv_reader.h>
#include <gnuradio/spead/recv_stream_config.h>
#include <gnuradio/spead/stats.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gr {
namespace spead {

namespace recv {

/*!
 * \brief Readers feed packets to one packet path and a placement: heap placement
 * (heaps assembled whole wait in a bounded queue for the consumer: a GNU Radio block's
 * work(), or your code calling pop()) or, for a continuous stream, chunk placement
 * (data heaps copied by timestamp into chunks, popped with pop_chunk(); other heaps
 * still popped with pop()).
 *
 * Thread-safe: readers hand packets over from their threads, any thread may pop(),
 * stop() or get_stats(). docs/dev-recv-locking.md describes the locks.
 */
class SPEAD_API stream
{
public:
    explicit stream(const stream_config& config = stream_config());
    virtual ~stream();
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;

    /*! Constructs a reader for this stream and starts it (see add_reader()). */
    template <typename Reader, typename... Args>
    Reader& emplace_reader(Args&&... args)
    {
        auto r = std::make_unique<Reader>(*this, std::forward<Args>(args)...);
        Reader& ref = *r;
        add_reader(std::move(r));
        return ref;
    }
    /*! Takes ownership of a reader constructed for this stream and starts it (with
     * stream_config::set_explicit_start(), start() starts it). \throws
     * std::logic_error with explicit_start once start() has been called */
    void add_reader(std::unique_ptr<reader> r);
    /*! With stream_config::set_explicit_start(): starts every reader added so far, at
     * once (several streams started one after the other begin within microseconds).
     * Otherwise nothing: readers start when added. Idempotent. */
    void start();

    enum class pop_result { heap, timeout, stopped };
    /*! Waits up to \p timeout for a heap. `stopped` once the stream has ended and
     * every queued heap has been taken. */
    pop_result pop(heap& out, std::chrono::microseconds timeout);
    /*! Non-blocking pop. */
    bool try_pop(heap& out);

    /*!
     * Continuous streams: waits up to \p timeout for the next chunk (or run of lost
     * positions), in output order. `stopped` once the stream has ended and every
     * chunk has been taken. Give each chunk back with return_chunk() once copied out.
     * \throws std::logic_error in a stream of heaps (not set_continuous()).
     */
    pop_result pop_chunk(chunk_entry& out, std::chrono::microseconds timeout);
    /*! Non-blocking pop_chunk(). */
    bool try_pop_chunk(chunk_entry& out);
    /*! A chunk popped and copied out, free for new positions. */
    void return_chunk(std::unique_ptr<chunk> c);
    /*! Continuous streams: bytes of every data heap, learnt from the first one (0
     * before it, and in a stream of heaps). */
    std::size_t get_heap_bytes() const;

    /*! Stops the readers (joining their threads), flushes live heaps and wakes
     * consumers. Idempotent; returns within about a second. */
    void stop();
    /*! Stream ended: stop(), a stop heap, every reader reached the end of its input, or
     * a reader failed (has_failed()). */
    bool is_stopped() const;

    /*! Counters of the placement (its assemblers and queues), the readers' failures
     * and every reader's transport, summed. */
    recv_stats get_stats() const;
    const stream_config& get_config() const { return d_config; }
    /*! Heaps waiting in the queue for the consumer now (a continuous stream's
     * control heaps); for monitoring. */
    std::size_t get_queued_heaps() const;

    /*! The stream ended because a reader failed (counted in reader_errors). */
    bool has_failed() const;
    /*! Why the first reader that failed did (its cause and fix); empty if none. */
    std::string get_failure() const;

private:
    friend class reader;
    struct impl;
    /*! A reader's batch, to the placement. */
    bool add_packets(const packet_view* packets, std::size_t n, std::size_t source);
    /*! See reader::reserve_sources() and reader::end_source(). */
    std::size_t reserve_sources(std::size_t n);
    void end_source(std::size_t source);
    std::size_t wait_for_queue_space(std::chrono::microseconds timeout);
    /*! A reader's run() returned: at end of input once every reader has, the stream
     * flushes and ends. */
    void reader_finished();
    /*! A reader's run() threw: counted, logged once, and the stream ends. */
    void reader_failed(const std::string& what);

    stream_config d_config;
    std::unique_ptr<impl> d_impl;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_STREAM_H */
