/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_RDMA_H
#define INCLUDED_SPEAD_RECV_RDMA_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/listen_config_base.h>
#include <gnuradio/spead/rdma_config_base.h>
#include <gnuradio/spead/recv_link.h>
#include <gnuradio/spead/recv_stream.h>
#include <cstddef>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Settings of a listening SPEAD-over-RDMA reader (a connected link over RC
 * queue pairs, set up with rdma_cm). Setters validate and throw std::invalid_argument
 * naming the parameter, the value and the fix; what depends on the device
 * (max_packet_size against its max message size, an interface without a verbs device)
 * and on several settings together (rdma_depth with rdma_connections) is checked when
 * the reader is made.
 */
class SPEAD_API rdma_config : public rdma_config_base<rdma_config>,
                              public listen_config_base<rdma_config>
{
public:
    /*! Largest message (one SPEAD packet) per connection, bytes: 1 MiB + 4 KiB, so
     * that a 1 MiB heap and its header go as one message (half the per-message work of
     * two). RC needs no MTU-sized packets; the device's max message size is the limit,
     * checked when the reader is made. Each connection registers recv_depth receives
     * of this size, and an RDMA-write ring of rdma_depth of them. */
    static constexpr std::size_t default_max_packet_size = (std::size_t(1) << 20) + 4096;
    /*! Largest max_packet_size accepted, bytes (1 GiB). */
    static constexpr std::size_t max_max_packet_size = std::size_t(1) << 30;
    /*! Connections that may use the RDMA-write path (the rest use SendRecv). */
    static constexpr std::size_t default_rdma_connections = 4;
    /*! Writes in flight per RDMA-write connection (its ring holds this many
     * max_packet_size messages). */
    static constexpr std::size_t default_rdma_depth = 8;
    static constexpr std::size_t max_rdma_depth = 4096;
    /*! Receives kept posted per connection (messages in flight on either path). */
    static constexpr std::size_t default_recv_depth = 16;
    static constexpr std::size_t max_recv_depth = 4096;

    /*! The endpoint is listened on (rdma_config_base). */
    static constexpr bool receives = true;

    rdma_config() = default;

    /*! How many connections may use the RDMA-write path, 0 (SendRecv only) to
     * max_connections; default 4. */
    rdma_config& set_rdma_connections(std::size_t n);
    std::size_t get_rdma_connections() const { return d_rdma_connections; }
    /*! Writes in flight per RDMA-write connection, 0 to 4096, default 8; more go by
     * SendRecv, in order. 0 needs rdma_connections = 0. */
    rdma_config& set_rdma_depth(std::size_t n);
    std::size_t get_rdma_depth() const { return d_rdma_depth; }
    /*! Receives posted per connection, 1 to 4096, default 16 (at least rdma_depth). */
    rdma_config& set_recv_depth(std::size_t n);
    std::size_t get_recv_depth() const { return d_recv_depth; }

private:
    std::size_t d_rdma_connections = default_rdma_connections;
    std::size_t d_rdma_depth = default_rdma_depth;
    std::size_t d_recv_depth = default_recv_depth;
};

/*!
 * Checks what the setters cannot check one by one: rdma_depth = 0 with
 * rdma_connections > 0, recv_depth below rdma_depth, no endpoint. The reader calls
 * it. \throws std::invalid_argument naming the parameter, the value and the fix
 */
SPEAD_API void validate(const rdma_config& config);

/*!
 * The config after the GR_SPEAD_RDMA_* environment overrides (each applied is
 * logged): GR_SPEAD_RDMA_INTERFACE, GR_SPEAD_RDMA_CONNECTIONS, GR_SPEAD_RDMA_DEPTH.
 * \throws std::invalid_argument naming the variable when its value is bad
 */
SPEAD_API rdma_config with_environment(rdma_config config);

/*!
 * \brief Listens for SPEAD over RDMA (RC queue pairs through rdma_cm) and feeds every
 * connection's packets to a stream: the rdma twin of tcp_reader, with its semantics
 * (fan-in of max_connections senders, allowed_peers, back-pressure instead of loss,
 * every connection ending in exactly one connections_* counter).
 *
 * Each packet arrives as one message, in a posted receive (SendRecv) or written by
 * the sender into this connection's ring (RDMA write with immediate; the first
 * rdma_connections connections), and goes to the stream where it landed: the heap's
 * copy into the output is the only copy. Credits keep every sender within the
 * posted receives and the released ring (no RNR). A dead sender is found through
 * rdma_cm's events and the RC retries of a keepalive credit write (about every
 * second), counted in connections_lost and logged.
 */
class SPEAD_API rdma_reader : public link_reader
{
public:
    /*! Binds and listens (after with_environment() and validate()).
     * \throws std::invalid_argument for a bad config, a non-verbs interface or a
     *         max_packet_size above the device's max message size
     * \throws std::system_error when rdma_cm fails (e.g. the port is in use) */
    rdma_reader(stream& owner, const rdma_config& config);
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_RDMA_H */
