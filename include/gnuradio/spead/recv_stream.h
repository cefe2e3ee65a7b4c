/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_STREAM_H
#define INCLUDED_SPEAD_RECV_STREAM_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/continuous_layout.h>
#include <gnuradio/spead/recv_chunk.h>
#include <gnuradio/spead/recv_heap.h>
#include <gnuradio/spead/recv_reader.h>
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

struct chunk_stream_setup; // recv_chunk_stream.h

/*!
 * \brief A time-continuous stream (spead.source output_mode continuous): data heaps,
 * the ones carrying \p timestamp_item, are placed by timestamp into chunks
 * (recv::chunk) instead of being assembled into heaps; see docs/continuous.md. The
 * layout fields (timestamp_item, timestamp_step, substreams, substream_item,
 * item_bytes: every heap's size must be a whole number of items) are
 * continuous_layout's, shared with spead.sink's continuous input.
 */
struct SPEAD_API continuous_config : continuous_layout {
    /*! Positions that may fill at once, per substream (default 64). */
    std::size_t window_heaps = 64;
    /*! Positions waiting for the consumer; 0: as many as queue_bytes hold. */
    std::size_t queue_positions = 0;
    /*! Memory for positions waiting for the consumer when queue_positions is 0. */
    std::size_t queue_bytes = std::size_t(256) << 20;
    /*! Positions per chunk; 0: automatic (about 1 MiB per substream). */
    std::size_t chunk_positions = 0;
    /*! The substream (value of substream_item) of output 0: this receiver takes
     * substreams first_substream .. first_substream + substreams - 1, and counts
     * heaps of the others in heaps_other_substream (default 0). Needs
     * substream_item when not 0. */
    std::uint64_t first_substream = 0;

    /*! \throws std::invalid_argument naming the field, the value and the fix */
    void validate() const;
};

/*!
 * \brief What a network reader does when the heap queue is full
 * (stream_config::set_full_queue_policy()). A capture replay always waits: a file
 * never loses heaps to a slow consumer.
 */
enum class full_queue_policy {
    /*! The reader waits for the consumer, as spead2's does: datagrams then wait in the
     * socket buffer (buffer_size), and what does not fit there is dropped by the kernel
     * and counted (packets_dropped_socket_overflow / runs_dropped_socket_overflow;
     * with ibverbs frames_dropped_no_buffer). Each wait counts reader_waits_queue_full.
     */
    block,
    /*! The newest heap is dropped and counted (heaps_dropped_queue_full): the reader
     * never waits for the consumer. */
    drop
};

/*!
 * \brief Settings of a receive stream. Setters validate and throw
 * std::invalid_argument naming the parameter and the fix.
 */
class SPEAD_API stream_config
{
public:
    stream_config() = default;

    /*! Live heaps assembled at once (default 4). More interleaved senders or
     * reordering need more. */
    stream_config& set_max_heaps(std::size_t n);
    std::size_t get_max_heaps() const { return d_max_heaps; }

    /*! Largest heap accepted, bytes (default 64 MiB); larger heaps are dropped and
     * counted, so hostile input cannot exhaust memory. */
    stream_config& set_max_heap_size(std::size_t bytes);
    std::size_t get_max_heap_size() const { return d_max_heap_size; }

    stream_config& set_incomplete_heaps(incomplete_heaps policy);
    incomplete_heaps get_incomplete_heaps() const { return d_incomplete; }

    /*! End the stream at a STREAM_CTRL stop heap (default true, as spead2). When
     * false, the stop heap is counted and delivered as an ordinary heap, as spead2
     * does (heap::is_stop()). In a continuous stream a stop heap ends the reader
     * (thread) it came by, and the stream ends once every reader has: each reader's
     * senders stop on their own. */
    stream_config& set_stop_on_stop_heap(bool stop);
    bool get_stop_on_stop_heap() const { return d_stop_on_stop_heap; }

    /*! Completed heaps queued for the consumer (default 8). When full, what happens is
     * the full_queue_policy's. At most max_queue_heaps; the queue's memory grows as it
     * fills. */
    stream_config& set_queue_heaps(std::size_t n);
    static constexpr std::size_t max_queue_heaps = std::size_t(1) << 20;
    std::size_t get_queue_heaps() const { return d_queue_heaps; }

    /*! When the heap queue is full: drop the newest heap (default here and in the
     * source block; Python streams, spead2's, block) or block the network reader (see
     * full_queue_policy). A continuous stream's chunks do not follow it (see
     * docs/continuous.md); its control heaps do not either (dropped when full). */
    stream_config& set_full_queue_policy(full_queue_policy policy);
    full_queue_policy get_full_queue_policy() const { return d_full_queue_policy; }

    /*! Heap storages kept for reuse (default: max_heaps + queue_heaps + 4). */
    std::size_t get_pool_heaps() const { return d_max_heaps + d_queue_heaps + 4; }

    /*! Makes the stream time-continuous (validates \p config). Heaps without the
     * timestamp item (descriptors, stop) are still assembled and popped as heaps. */
    stream_config& set_continuous(const continuous_config& config);
    bool is_continuous() const { return d_continuous; }
    const continuous_config& get_continuous() const { return d_continuous_config; }

    /*! Makes it a spead2-style chunk stream (recv_chunk_stream.h: chunk_ring_stream
     * sets this). */
    stream_config& set_chunk_stream(std::shared_ptr<chunk_stream_setup> setup);
    const std::shared_ptr<chunk_stream_setup>& get_chunk_stream() const
    {
        return d_chunk_stream;
    }

private:
    std::size_t d_max_heaps = 4;
    std::size_t d_max_heap_size = 64 * 1024 * 1024;
    incomplete_heaps d_incomplete = incomplete_heaps::drop;
    bool d_stop_on_stop_heap = true;
    std::size_t d_queue_heaps = 8;
    full_queue_policy d_full_queue_policy = full_queue_policy::drop;
    bool d_continuous = false;
    continuous_config d_continuous_config;
    std::shared_ptr<chunk_stream_setup> d_chunk_stream;
};

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

    /*! Constructs a reader for this stream and starts it. */
    template <typename Reader, typename... Args>
    Reader& emplace_reader(Args&&... args)
    {
        auto r = std::make_unique<Reader>(*this, std::forward<Args>(args)...);
        Reader& ref = *r;
        add_reader(std::move(r));
        return ref;
    }
    /*! Takes ownership of a reader constructed for this stream and starts it. */
    void add_reader(std::unique_ptr<reader> r);

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
