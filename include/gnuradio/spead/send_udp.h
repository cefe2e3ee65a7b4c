/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_UDP_H
#define INCLUDED_SPEAD_SEND_UDP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_stream.h>
#include <gnuradio/spead/udp_config_base.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Settings of a kernel-socket UDP sender (the twin of udp_ibv_config): the
 * endpoints, interface and buffer of udp_config_base, and the TTL.
 */
class SPEAD_API udp_config : public udp_config_base<udp_config>
{
public:
    /*! Socket send buffer, bytes (512 KiB, as spead2). */
    static constexpr std::size_t default_buffer_size = 512 * 1024;
    /*! Endpoints are destinations, one substream each. */
    static constexpr bool receives = false;

    udp_config() = default;

    /*! IP time-to-live of multicast and unicast packets, 0 to 255 (default 1: the
     * local network only, as spead2). */
    udp_config& set_ttl(int ttl);
    int get_ttl() const { return d_ttl; }

private:
    int d_ttl = 1;
};

/*!
 * \brief Sends heaps over a kernel UDP socket: substream i goes to endpoint i.
 *
 * Packets go out in sendmmsg() batches, gathered straight from item memory. Don't
 * Fragment is set (IP_MTU_DISCOVER = IP_PMTUDISC_DO): a packet that does not fit the
 * path MTU fails (counted in packets_failed) rather than fragmenting, and construction
 * already refuses a max_packet_size above the MTU towards any destination. A full
 * socket buffer (EAGAIN) or device queue (ENOBUFS) makes the writer wait, not fail.
 */
class SPEAD_API udp_stream : public stream
{
public:
    /*! \throws std::invalid_argument for no endpoints, or a max_packet_size the path
     * MTU cannot carry \throws std::system_error when a socket call fails */
    udp_stream(boost::asio::io_context& io,
               const stream_config& config,
               const udp_config& udp_config);
    /*! Sends from a duplicate of \p socket, a UDP socket its caller made (spead2's
     * socket form; the caller may close theirs at once), to the config's endpoints:
     * its TTL, interface and buffer size stay as the caller set them (Don't Fragment
     * is set). \throws std::invalid_argument when \p socket is not a UDP socket of the
     * endpoints' family */
    udp_stream(boost::asio::io_context& io,
               const stream_config& config,
               int socket,
               const udp_config& udp_config);

    /*! Send buffer the kernel granted, bytes. */
    std::size_t get_granted_buffer_size() const;

private:
    struct impl; //!< the writer, owned by the stream
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_UDP_H */
