/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_RDMA_H
#define INCLUDED_SPEAD_SEND_RDMA_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/dial_config_base.h>
#include <gnuradio/spead/rdma_config_base.h>
#include <gnuradio/spead/send_link.h>
#include <boost/asio/io_context.hpp>
#include <cstddef>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Settings of a SPEAD-over-RDMA sender (a connected link over an RC queue pair,
 * set up with rdma_cm). Setters validate and throw std::invalid_argument naming the
 * parameter, the value and the fix; what depends on the device is checked when the
 * stream is made.
 */
class SPEAD_API rdma_config : public rdma_config_base<rdma_config>,
                              public dial_config_base<rdma_config>
{
public:
    /*! Inline data requested for small messages; the device's granted value is used. */
    static constexpr std::size_t default_inline_bytes = 64;
    static constexpr std::size_t max_inline_bytes = 4096;
    /*! Messages the sender has in flight (its registered send buffer holds them). */
    static constexpr std::size_t default_send_depth = 8;
    static constexpr std::size_t max_send_depth = 4096;

    /*! The endpoint is connected to (rdma_config_base). */
    static constexpr bool receives = false;

    rdma_config() = default;

    /*! Requested inline size, 0 to 4096 bytes (default 64); the device may grant
     * less, and the granted value is used. */
    rdma_config& set_inline_bytes(std::size_t bytes);
    std::size_t get_inline_bytes() const { return d_inline_bytes; }
    /*! Messages in flight, 1 to 4096 (default 8). */
    rdma_config& set_send_depth(std::size_t n);
    std::size_t get_send_depth() const { return d_send_depth; }

private:
    std::size_t d_inline_bytes = default_inline_bytes;
    std::size_t d_send_depth = default_send_depth;
};

/*! The config after the GR_SPEAD_RDMA_* overrides (logged): GR_SPEAD_RDMA_INTERFACE,
 * GR_SPEAD_RDMA_INLINE_BYTES. \throws std::invalid_argument naming the variable */
SPEAD_API rdma_config with_environment(rdma_config config);

/*!
 * \brief Sends heaps as SPEAD over RDMA (an RC queue pair through rdma_cm) to one
 * rdma_reader: the rdma twin of tcp_stream, with its semantics (connects in the
 * constructor; back-pressure counted in send_waits and send_wait_us; a lost
 * connection counted in connections_lost and heaps_lost_in_flight, then reconnect
 * as configured).
 *
 * Each packet is one message of up to the stream_config's max_packet_size bytes (RC
 * needs no MTU-sized packets: 1 MiB suits it; at most the device's max message size
 * and what the receiver grants, checked when connecting), copied into a registered
 * send slot (inline when it fits the granted inline size) and sent by RDMA write with
 * immediate into the receiver's ring while it grants room and fewer than rdma_depth
 * writes are unreleased, else by SEND into a posted receive; never without a posted
 * receive. Order is kept across the two paths (one queue pair).
 */
class SPEAD_API rdma_stream : public link_stream
{
public:
    /*! \throws std::invalid_argument for a config without an endpoint, a non-verbs
     *          interface or a (stream_config) max_packet_size above the device's
     *  \throws std::system_error when the connection fails and reconnect is off */
    rdma_stream(boost::asio::io_context& io,
                const stream_config& config,
                const rdma_config& rdma_config);
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_RDMA_H */
