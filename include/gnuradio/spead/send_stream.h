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

namespace gr {
namespace spead {
namespace send {

struct packet_piece;

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

private:
    std::size_t d_max_packet_size = 1472;
    double d_rate = 0.0;
    std::size_t d_burst_size = 65536;
    std::size_t d_max_heaps = 4;
};

/*!
 * \brief Heap queue → packetiser → rate limiter → writer (a transport).
 *
 * A dedicated writer thread cuts queued heaps into packets and hands batches to the
 * transport. Completion handlers run on the io_context given at construction (run
 * it); send_heap() waits without needing the io_context to run.
 */
class SPEAD_API stream
{
public:
    using completion_handler =
        std::function<void(const boost::system::error_code& ec, std::size_t bytes)>;

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

protected:
    /*! One SPEAD packet for the transport: pieces (header first) and destination. */
    struct packet {
        const packet_piece* pieces;
        std::size_t n_pieces;
        std::size_t size;
        std::size_t substream;
    };

    stream(boost::asio::io_context& io,
           const stream_config& config,
           std::size_t num_substreams);

    /*! Derived constructors call this last, once the transport is ready. */
    void start_writer();
    /*! Derived destructors call this first: sends what is queued, joins the writer. */
    void stop_writer();

    /*!
     * Writes \p n packets (writer thread only). May return before the transport is done
     * with the packets' memory (asynchronous NICs); set \p ec on failure.
     * \return packets accepted; the rest of the batch counts as failed.
     */
    virtual std::size_t write_packets(const packet* packets,
                                      std::size_t n,
                                      boost::system::error_code& ec) = 0;

    /*!
     * Packets written so far that the transport is done with (their memory may be
     * reused). Synchronous transports keep the default. With \p wait, blocks until all
     * written packets are done. Errors found on completion go to \p ec.
     */
    virtual std::uint64_t reap_completions(bool wait, boost::system::error_code& ec);

    /*! Adds to a counter (writer thread, e.g. packets_zero_copy). */
    void add_stat(send_stat s, std::uint64_t n = 1);

    boost::asio::io_context& get_io_context() { return d_io; }

private:
    struct impl;

    boost::asio::io_context& d_io;
    stream_config d_config;
    std::size_t d_num_substreams;
    std::unique_ptr<impl> d_impl;
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_STREAM_H */
