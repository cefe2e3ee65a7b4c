/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_STREAM_H
#define INCLUDED_SPEAD_SEND_STREAM_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_stream_config.h>
#include <gnuradio/spead/stats.h>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace send {

class packet_writer;

/*!
 * \brief Heap queue → packetiser → rate limiter → writer (a transport).
 *
 * A dedicated writer thread cuts queued heaps into packets and hands batches to the
 * transport, a packet_writer the stream owns (udp_stream, udp_ibv_stream and
 * pcap_stream each make theirs). Completion handlers run on the io_context given at
 * construction (run it); send_heap() waits without needing the io_context to run.
 */
/*! How the heaps of a group go out (stream::async_send_heaps; spead2's GroupMode). */
enum class group_mode {
    serial,     //!< one heap after another, each whole
    round_robin //!< one packet of each heap in turn (a heap that ends drops out)
};

/*! A heap of a group, with its cnt (< 0: the stream's sequence) and substream. */
struct heap_reference {
    const heap* h = nullptr;
    std::int64_t cnt = -1;
    std::size_t substream_index = 0;
};

class SPEAD_API stream
{
public:
    using completion_handler =
        std::function<void(const boost::system::error_code& ec, std::size_t bytes)>;

    /*!
     * A stream over \p writer, which it owns: the writer thread starts here; the
     * destructor sends what is queued and joins the thread before the writer goes.
     * \throws std::invalid_argument when \p num_substreams is 0.
     */
    stream(boost::asio::io_context& io,
           const stream_config& config,
           std::size_t num_substreams,
           std::unique_ptr<packet_writer> writer);
    virtual ~stream();
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;

    /*!
     * Queues a heap for substream (destination) \p substream_index. \p cnt < 0 takes the
     * next value of the cnt sequence. The heap and all item memory must stay valid
     * until \p handler runs. Returns false if the queue is full (the handler then runs
     * with boost::asio::error::would_block and heaps_rejected_queue_full counts it).
     */
    bool async_send_heap(const heap& h,
                         completion_handler handler,
                         std::int64_t cnt = -1,
                         std::size_t substream_index = 0);

    /*!
     * Queues \p heaps as one group, all or none (spead2's async_send_heaps): false when
     * the queue lacks room for all of them (\p handler then runs with would_block, and
     * heaps_rejected_queue_full counts each). \p mode round_robin interleaves their
     * packets, one of each in turn, so that heaps to several substreams leave
     * together. \p handler runs once, after the last heap of the group, with the
     * first error and the bytes of all. Heaps and item memory as async_send_heap().
     * \throws std::invalid_argument for an empty group, a null heap or a substream
     * beyond the stream's (nothing is queued, the cnt sequence is unchanged)
     */
    bool async_send_heaps(const std::vector<heap_reference>& heaps,
                          completion_handler handler,
                          group_mode mode = group_mode::serial);

    /*! Sends a heap and waits until it has left (blocking while the queue is full).
     * \return bytes sent. \throws boost::system::system_error on a transport error. */
    std::size_t
    send_heap(const heap& h, std::int64_t cnt = -1, std::size_t substream_index = 0);

    /*! Waits until every queued heap has been sent. */
    void flush();

    /*! Heap cnts for heaps sent without an explicit cnt: next, next+step, ... */
    void set_cnt_sequence(std::uint64_t next, std::uint64_t step);

    std::size_t get_num_substreams() const { return d_num_substreams; }
    const stream_config& get_config() const { return d_config; }
    send_stats get_stats() const;
    /*! Heaps queued and not yet completed (being sent, or waiting); for monitoring. */
    std::size_t get_queued_heaps() const;

    /*! The transport failed for good (the device died or went away; counted in
     * writer_errors): every heap from now on fails, so stop sending. */
    bool has_failed() const;
    /*! Why the transport failed (its cause and fix); empty if it has not. */
    std::string get_failure() const;

protected:
    /*! The transport this stream writes through (its derived classes' getters). */
    packet_writer& writer() { return *d_writer; }
    const packet_writer& writer() const { return *d_writer; }

private:
    struct impl;
    void add_stat(send_stat s, std::uint64_t n);
    void writer_failed(const std::string& cause);

    boost::asio::io_context& d_io;
    stream_config d_config;
    std::size_t d_num_substreams;
    // Destroyed after the queue (d_impl), and only once ~stream has joined the
    // writer thread.
    std::unique_ptr<packet_writer> d_writer;
    std::unique_ptr<impl> d_impl;
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_STREAM_H */
