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
#include <gnuradio/spead/stats.h>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace gr {
namespace spead {
namespace send {

class packet_writer;

/*!
 * \brief Settings of a send stream. Setters validate and throw std::invalid_argument
 * naming the parameter and the fix.
 */
class SPEAD_API stream_config
{
public:
    stream_config() = default;

    /*! Largest SPEAD packet (UDP payload) in bytes, default 1472; rounded down to a
     * multiple of 8 when packets are cut. Never exceeded, so IP never fragments. */
    stream_config& set_max_packet_size(std::size_t bytes);
    std::size_t get_max_packet_size() const { return d_max_packet_size; }
    /*! For message transports (rdma), whose packets are not UDP datagrams: the same
     * setting up to 1 GiB (the transport checks its device's max message size). */
    stream_config& set_max_message_size(std::size_t bytes);

    /*! Send rate in bytes per second of SPEAD packets; 0 = as fast as possible. */
    stream_config& set_rate(double bytes_per_second);
    double get_rate() const { return d_rate; }

    /*! Bytes that may go out back-to-back before the rate limiter waits (default
     * 65536). After idle time the limiter does not catch up beyond one burst. */
    stream_config& set_burst_size(std::size_t bytes);
    std::size_t get_burst_size() const { return d_burst_size; }

    /*! Heaps that may wait in the send queue (default 4). */
    stream_config& set_max_heaps(std::size_t n);
    std::size_t get_max_heaps() const { return d_max_heaps; }

    /*!
     * Where async_send_heap()'s completion handlers run: false (default) = posted to
     * the stream's io_context; true = on the writer thread itself, as soon as the heap
     * completes (the way spead2's handlers run on the thread that sends).
     *
     * Inline handlers save a thread wake-up per heap, and a producer that queues its
     * next heap from the handler never leaves the writer waiting for another thread
     * to be scheduled: at full rate on a busy machine that wait is what a sender
     * loses. Inline handlers must be short and must not block: they may call
     * async_send_heap(), never send_heap() or flush(). A heap refused by
     * async_send_heap() (queue full, stream stopping) still has its handler posted to
     * the io_context.
     */
    stream_config& set_inline_completions(bool inline_completions);
    bool get_inline_completions() const { return d_inline_completions; }

private:
    std::size_t d_max_packet_size = 1472;
    double d_rate = 0.0;
    std::size_t d_burst_size = 65536;
    std::size_t d_max_heaps = 4;
    bool d_inline_completions = false;
};

/*!
 * \brief Heap queue → packetiser → rate limiter → writer (a transport).
 *
 * A dedicated writer thread cuts queued heaps into packets and hands batches to the
 * transport, a packet_writer the stream owns (udp_stream, udp_ibv_stream and
 * pcap_stream each make theirs). Completion handlers run on the io_context given at
 * construction (run it); send_heap() waits without needing the io_context to run.
 */
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
