/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_INPROC_QUEUE_H
#define INCLUDED_SPEAD_INPROC_QUEUE_H

#include <gnuradio/spead/api.h>
#include <condition_variable>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief SPEAD packets handed from senders to readers in one process (spead2's
 * inproc_queue): a send::inproc_stream writes into it, a recv::inproc_reader reads
 * from it. Two flowgraphs, or a flowgraph and a script, of one process exchange
 * heaps without a socket; the tests use it as a lossless transport.
 *
 * Unbounded, as spead2's: a sender never waits and never loses a packet; the queue
 * holds what the readers have not taken yet. Packet buffers the readers are done
 * with are kept for the next packets (up to recycled_limit of them), so a steady
 * stream allocates nothing per packet. Thread-safe. stop() is the end of the stream
 * for the readers: they take what is queued, then end; adding after it fails.
 */
class SPEAD_API inproc_queue
{
public:
    using packet = std::vector<std::uint8_t>;

    /*! Packet buffers kept for reuse at most. */
    static constexpr std::size_t recycled_limit = 4096;

    inproc_queue() = default;
    inproc_queue(const inproc_queue&) = delete;
    inproc_queue& operator=(const inproc_queue&) = delete;

    /*! A buffer of \p size bytes for a packet to add(): a reused one when there is. */
    packet make_packet(std::size_t size);
    /*! Queues a packet (spead2's add_packet takes a copy: see add_copy()).
     * \return false, and the packet is dropped, once the queue is stopped */
    bool add(packet&& p);
    /*! Queues a copy of \p size bytes at \p data. \throws std::logic_error once the
     * queue is stopped (as spead2, whose queue refuses packets after stop()) */
    void add_copy(const void* data, std::size_t size);
    /*! The end of the stream: readers end once they have taken what is queued. */
    void stop();
    bool is_stopped() const;

    enum class pop_result { packets, timeout, stopped };
    /*!
     * Moves up to \p max packets (at least 1) onto the end of \p out, waiting up to
     * \p timeout for one. `stopped`: the queue is stopped and empty (nothing moved).
     */
    pop_result
    pop(std::vector<packet>& out, std::size_t max, std::chrono::microseconds timeout);
    /*! Gives the buffers of \p used back for reuse, and empties it. */
    void recycle(std::vector<packet>& used);
    /*! Ends a wait in pop() at once (it returns `timeout`): a reader being stopped. */
    void interrupt();
    /*! Packets queued and not yet taken. */
    std::size_t size() const;

private:
    mutable std::mutex d_mutex;
    std::condition_variable d_available;
    std::deque<packet> d_packets;
    std::vector<packet> d_recycled;
    bool d_stopped = false;
    std::uint64_t d_interrupts = 0; //!< interrupt() calls, for waits to notice one
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_INPROC_QUEUE_H */
