/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_SEND_SLOTS_H
#define INCLUDED_SPEAD_MAPPING_SEND_SLOTS_H

#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/flavour.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_stream.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief spead.sink's heaps on their way out: a fixed number of slots, each a payload
 * copy and the heap that points into it, and the send stream they go to.
 *
 * A slot is taken (waiting while all are busy: backpressure), filled and sent; it
 * frees itself when the stream has sent its heap. Completion handlers run on the
 * caller's thread, in acquire() and close(). Not thread-safe (the block's work
 * thread), but for stats(), which any thread may call.
 */
class SPEAD_API send_slots
{
public:
    send_slots(std::size_t slots, gr::logger_ptr logger);
    ~send_slots();

    /*! The io_context a stream handed to open() must post its completions to. */
    boost::asio::io_context& io() { return d_io; }
    /*! Sends on \p stream from now on. */
    void open(std::unique_ptr<send::stream> stream);
    /*! Sends on \p streams from now on, one substream each (several connected links:
     * substream i goes to streams[i]). */
    void open(std::vector<std::unique_ptr<send::stream>> streams);
    bool is_open() const { return !d_streams.empty(); }
    /*! Sends what is queued, waits for it and closes the stream (joining its writer);
     * stats() then gives its last counters. \p flush false: closes without waiting
     * (a connected link that is down: what is queued is abandoned and counted). */
    void close(bool flush = true);
    /*! Substreams (destinations) of the open stream. */
    std::size_t substreams() const { return d_substreams; }
    /*! The streams' counters, summed (the last ones once closed). */
    send_stats stats() const;
    /*! One open stream's counters and queue, for monitoring. */
    struct stream_snapshot {
        send_stats stats;
        std::size_t queued_heaps = 0;
    };
    /*! Each open stream's, in substream order when there is one per substream (none
     * while closed). Any thread. */
    std::vector<stream_snapshot> stream_snapshots() const;
    /*! A stream's transport failed for good (send::stream::has_failed()): the sink
     * ends its flowgraph. Cheap (no lock): asked on every work(). Work thread only. */
    bool has_failed() const;
    /*! Why (send::stream::get_failure()), the first failed stream's; empty while none
     * has. */
    std::string failure() const;

    /*! Called while every slot is busy, between waits of at most 100 ms (the block
     * publishes its stats and checks for a stop request there). */
    void set_on_wait(std::function<void()> on_wait) { d_on_wait = std::move(on_wait); }

    /*! A slot taken for a heap. */
    struct slot_ref {
        std::size_t index;
        std::uint8_t* payload; //!< the bytes asked for
        send::heap& heap;      //!< empty, of the flavour asked for
    };
    /*! Waits for a free slot and gives it a payload buffer of \p bytes bytes and an
     * empty heap of flavour \p f. */
    slot_ref acquire(std::size_t bytes, const flavour& f);
    /*! Hands slot \p index's heap to the stream as \p cnt on \p substream; the slot
     * frees itself once it is sent (a send error is logged once per kind and
     * counted by the stream in heaps_failed).
     * \throws std::invalid_argument when the stream refuses the heap (the slot is
     * freed) */
    void send(std::size_t index, std::uint64_t cnt, std::size_t substream);
    /*! Frees a slot that will not be sent. */
    void release(std::size_t index);
    /*! Sends \p h (which need not outlive the call) as \p cnt on \p substream.
     * \throws what the stream throws */
    void send_now(const send::heap& h, std::uint64_t cnt, std::size_t substream);

private:
    struct slot {
        std::vector<std::uint8_t> payload;
        std::optional<send::heap> heap;
        bool busy = false;
    };

    gr::logger_ptr d_logger;
    std::function<void()> d_on_wait;
    std::set<std::string> d_warned; //!< send errors already logged
    // member order = destruction order, reversed: the stream goes before the slots
    // its heaps point into, and before the io_context its handlers are posted to
    boost::asio::io_context d_io;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> d_io_guard;
    std::vector<slot> d_slots;
    mutable std::mutex d_stream_mutex; //!< guards d_streams and d_last_stats for stats()
    /*! One stream, or one per substream (each then sends its substream as its 0). */
    std::vector<std::unique_ptr<send::stream>> d_streams;
    send_stats d_last_stats;
    std::size_t d_substreams = 1;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_SEND_SLOTS_H */
