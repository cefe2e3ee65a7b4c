/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_STREAM_CONFIG_H
#define INCLUDED_SPEAD_SEND_STREAM_CONFIG_H

#include <gnuradio/spead/api.h>
#include <cstddef>

namespace gr {
namespace spead {
namespace send {

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

    /*! spead2's burst_rate_ratio: the highest rate, relative to rate, at which the
     * limiter catches up time the writer lost (a late wake-up, the scheduler); at
     * least 1 (never faster than rate), default 1.05, as spead2. */
    static constexpr double default_burst_rate_ratio = 1.05;
    stream_config& set_burst_rate_ratio(double ratio);
    double get_burst_rate_ratio() const { return d_burst_rate_ratio; }

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
    double d_burst_rate_ratio = default_burst_rate_ratio;
    std::size_t d_max_heaps = 4;
    bool d_inline_completions = false;
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_STREAM_CONFIG_H */
