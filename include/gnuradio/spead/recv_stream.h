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
#include <gnuradio/spead/stats.h>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gr {
namespace spead {

struct packet_header;

namespace recv {

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

    /*! \throws std::invalid_argument naming the field, the value and the fix */
    void validate() const;
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

    /*! Completed heaps queued for the consumer (default 8). When full, the newest heap
     * is dropped and counted (heaps_dropped_queue_full): the NIC is never blocked.
     * At most max_queue_heaps; the queue's memory grows as it fills. */
    stream_config& set_queue_heaps(std::size_t n);
    static constexpr std::size_t max_queue_heaps = std::size_t(1) << 20;
    std::size_t get_queue_heaps() const { return d_queue_heaps; }

    /*! Heap storages kept for reuse (default: max_heaps + queue_heaps + 4). */
    std::size_t get_pool_heaps() const { return d_max_heaps + d_queue_heaps + 4; }

    /*! Makes the stream time-continuous (validates \p config). Heaps without the
     * timestamp item (descriptors, stop) are still assembled and popped as heaps. */
    stream_config& set_continuous(const continuous_config& config);
    bool is_continuous() const { return d_continuous; }
    const continuous_config& get_continuous() const { return d_continuous_config; }

private:
    std::size_t d_max_heaps = 4;
    std::size_t d_max_heap_size = 64 * 1024 * 1024;
    incomplete_heaps d_incomplete = incomplete_heaps::drop;
    bool d_stop_on_stop_heap = true;
    std::size_t d_queue_heaps = 8;
    bool d_continuous = false;
    continuous_config d_continuous_config;
};

/*! A UDP payload handed from a transport to the stream. */
struct packet_view {
    const std::uint8_t* data;
    std::size_t size;
};

class stream;

/*!
 * \brief A source of packets for a stream (kernel UDP sockets, ibverbs, a capture).
 *
 * Constructed with the stream it feeds (stream::emplace_reader), which then runs the
 * reader's loop, run(), on a thread the reader owns, and joins that thread before it
 * destroys the reader: a reader class writes its loop and nothing about threads.
 *
 * run() returns at the end of its input (a capture file: the stream ends once every
 * reader has), or once stopping() is set or add_packets() returns false. It throws
 * when the transport fails for good; the exception's message names the cause and the
 * fix. The failure is counted (reader_errors), logged once, and ends the stream, so
 * its consumer sees `stopped` instead of waiting for packets that will never come.
 */
class SPEAD_API reader
{
public:
    explicit reader(stream& owner) : d_stream(owner) {}
    virtual ~reader();
    reader(const reader&) = delete;
    reader& operator=(const reader&) = delete;

    /*! Transport-level counters (frames rejected, kernel drops, ...). */
    virtual recv_stats transport_stats() const { return recv_stats(); }

protected:
    /*! The transport's receive loop (on the reader's thread). */
    virtual void run() = 0;
    /*! Called once stopping() is set, to end a wait in run() at once (e.g. write to an
     * eventfd it polls). Every wait in run() has a timeout anyway. */
    virtual void wake() {}
    /*! The stream is stopping: run() should return. */
    bool stopping() const { return d_stopping.load(std::memory_order_relaxed); }

    /*! Hands a batch of UDP payloads to the stream's assembler. Returns false once the
     * stream has ended (run() should then return). */
    bool add_packets(const packet_view* packets, std::size_t n);
    /*!
     * For readers that must not lose data to a slow consumer (capture replay): waits up
     * to \p timeout until the heap queue has room and returns the free queue slots (0 on
     * timeout or once the stream has ended). A packet completes at most one heap and
     * evicts at most one, so a batch of at most max(1, free / 2) packets cannot overflow
     * the queue. Network readers never call this: the NIC must not wait.
     */
    std::size_t wait_for_queue_space(std::chrono::microseconds timeout);
    /*! The stream this reader feeds. */
    stream& get_stream() { return d_stream; }

private:
    friend class stream;
    /*! Starts the thread that runs run() (the stream calls it once). */
    void start();
    /*! Sets stopping(), wakes run() and joins the thread (idempotent). */
    void join();

    stream& d_stream;
    std::atomic<bool> d_stopping{ false };
    std::thread d_thread;
};

/*!
 * \brief Readers feed packets to one heap assembler; completed heaps wait in a bounded
 * queue for the consumer (a GNU Radio block's work(), or your code calling pop()).
 *
 * Thread-safe: readers hand packets over from their threads, any thread may pop(),
 * stop() or get_stats().
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
     */
    pop_result pop_chunk(chunk_entry& out, std::chrono::microseconds timeout);
    /*! Non-blocking pop_chunk(). */
    bool try_pop_chunk(chunk_entry& out);
    /*! A chunk popped and copied out, free for new positions. */
    void return_chunk(std::unique_ptr<chunk> c);
    /*! Continuous streams: bytes of every data heap, learnt from the first one (0
     * before it). */
    std::size_t get_heap_bytes() const { return d_heap_bytes.load(); }

    /*! Stops the readers (joining their threads), flushes live heaps and wakes
     * consumers. Idempotent; returns within about a second. */
    void stop();
    /*! Stream ended: stop(), a stop heap, every reader reached the end of its input, or
     * a reader failed (has_failed()). */
    bool is_stopped() const { return d_stopped.load(); }

    /*! Counters of the assembler, the queue and every reader, summed. */
    recv_stats get_stats() const;
    const stream_config& get_config() const { return d_config; }

    /*! The stream ended because a reader failed (counted in reader_errors). */
    bool has_failed() const;
    /*! Why the first reader that failed did (its cause and fix); empty if none. */
    std::string get_failure() const;

private:
    friend class reader;
    struct impl;
    void enqueue(heap&& h);
    /*! Ends the stream: waits for copies in flight (the caller has none), flushes
     * the assemblers, wakes consumers. Idempotent. */
    void end_of_stream_locked(std::unique_lock<std::mutex>& lock);
    /*! Continuous: waits until no reader has a payload copy in flight, holding new
     * ones back meanwhile; the caller has none of its own. */
    void drain_copies_locked(std::unique_lock<std::mutex>& lock);
    bool add_packets(const packet_view* packets, std::size_t n);
    std::size_t wait_for_queue_space(std::chrono::microseconds timeout);
    /*! A reader's run() returned: at end of input once every reader has, the stream
     * flushes and ends. */
    void reader_finished();
    /*! A reader's run() threw: counted, logged once, and the stream ends. */
    void reader_failed(const std::string& what);
    /*! Ends the stream for \p what (cause and fix), said once (mutex held). */
    void fail_locked(std::unique_lock<std::mutex>& lock, const std::string& what);
    /*!
     * Continuous: decodes a batch, then places it under the lock, with the payload
     * copies made outside it so that several readers place in parallel. False after
     * a stop heap (the reader that brought it ends: every reader's sender stops on
     * its own) or once the stream has ended.
     */
    bool add_continuous(const packet_view* packets, std::size_t n);
    /*! Counts a batch, and tells the heap assembler when it comes after a pause (a
     * sender may have restarted). Called with the lock held. */
    void note_batch_locked(std::size_t n);
    /*! Continuous: makes the chunk assembler from the first data heap's packet
     * (mutex held); false when \p packet is not a data heap's. */
    bool make_chunk_placer_locked(std::unique_lock<std::mutex>& lock,
                                  const packet_header& packet);

    stream_config d_config;
    std::unique_ptr<impl> d_impl;
    std::atomic<bool> d_stopped{ false };
    std::atomic<std::size_t> d_heap_bytes{ 0 };
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_STREAM_H */
