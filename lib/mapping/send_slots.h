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
#include <condition_variable>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief spead.sink's heaps on their way out: a fixed number of slots, each a heap
 * and, when its payload is copied, the buffer it points into; and the send stream
 * they go to.
 *
 * A slot is taken (waiting while all are busy: backpressure), filled and sent; it
 * frees itself when the stream has sent its heap. A heap sent in place points into
 * the block's input buffer instead: its slot holds the input from a stream offset on
 * (first_held()) until it is sent, and the block consumes nothing from there.
 *
 * A stream that completes inline (stream_config::set_inline_completions, as spead.sink's
 * do) tells its completions from its writer thread. It wakes the block's thread only
 * once it has nothing left to send; until then wait() looks for completions itself,
 * ever less often (20 us to 1 ms apart). On a VM a wake-up costs the thread that
 * wakes: one per heap took the writer more than a twentieth of its time. Slots are
 * freed on the caller's thread, in acquire(), first_held(), wait() and close(). Not
 * thread-safe (the block's work thread), but for stats(), which any thread may call.
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
    /*! Heaps in flight at most. */
    std::size_t size() const { return d_slots.size(); }
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
    /*! Waits for a free slot and gives it an empty heap of flavour \p f, whose
     * payload stays in the block's input from stream offset \p hold on: the slot
     * holds it there until the heap is sent (payload is null). */
    slot_ref acquire_in_place(const flavour& f, std::uint64_t hold);
    /*! No slot holds input. */
    static constexpr std::uint64_t no_hold = ~std::uint64_t(0);
    /*! Runs the completions due, then gives the first stream offset a heap not yet
     * sent still reads from the block's input (no_hold: none); the block may consume
     * the items before it. */
    std::uint64_t first_held();
    /*! Waits until a heap in flight is sent, or 100 ms, calling on_wait first. */
    void wait();
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
        std::uint64_t hold = no_hold; //!< of a heap sent in place
        bool busy = false;
    };
    /*! Waits for a free slot and takes it with an empty heap of flavour \p f. */
    slot& take(const flavour& f, std::size_t& index);
    /*! A heap's completion, on the writer's thread (or, refused, the caller's). */
    void finished(std::size_t index, const boost::system::error_code& ec);
    /*! Frees the slots whose heaps completed, and says why a send failed (once per
     * kind). */
    void reap();

    /*! What the writer's thread tells the block's. */
    struct completions {
        std::mutex mutex;
        std::condition_variable woken;
        std::vector<std::pair<std::size_t, boost::system::error_code>> done;
        std::size_t in_flight = 0; //!< heaps handed to the stream, not completed
        bool waiting = false;      //!< the block's thread waits in wait()
    } d_completions;
    bool d_inline = false; //!< the stream completes inline (else through d_io)

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
