/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_UDP_H
#define INCLUDED_SPEAD_RECV_UDP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/udp_config_base.h>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Settings of a kernel-socket UDP reader (the twin of udp_ibv_config): the
 * endpoints, interface and buffer of udp_config_base, and the largest datagram.
 */
class SPEAD_API udp_config : public udp_config_base<udp_config>
{
public:
    /*! Socket receive buffer, bytes (8 MiB, as spead2's UDP reader). The kernel caps
     * it at net.core.rmem_max: the reader reads it back and warns, naming the sysctl
     * to raise, when it got less. */
    static constexpr std::size_t default_buffer_size = 8 * 1024 * 1024;
    /*! Largest datagram, bytes (9200, as spead2: jumbo frames with room to spare). */
    static constexpr std::size_t default_max_size = 9200;
    /*! Endpoints are places to listen on. */
    static constexpr bool receives = true;

    udp_config() = default;

    /*! Largest datagram (UDP payload) accepted, bytes, 64 to 65507 (default 9200).
     * Bigger datagrams are dropped and counted in datagrams_oversize. */
    udp_config& set_max_size(std::size_t bytes);
    std::size_t get_max_size() const { return d_max_size; }

private:
    std::size_t d_max_size = default_max_size;
};

/*!
 * \brief Receives SPEAD packets from kernel UDP sockets into a stream.
 *
 * One socket per distinct port and IP version: bound to the endpoint's address when it
 * is the only endpoint on that port, otherwise to 0.0.0.0 or :: (joining every
 * multicast group of the port, and no others); IPv6 sockets are IPV6_V6ONLY. A thread
 * waits in poll() and takes messages in recvmmsg() batches of up to 64; each batch goes
 * to the stream's assembler at once. Sockets ask for coalesced datagrams (UDP_GRO,
 * Linux 5.0, as spead2): a message may then be a run of up to 64 datagrams from one
 * sender, split again here. Kernel drops (socket buffer full, via SO_RXQ_OVFL) are
 * counted in runs_dropped_socket_overflow (a dropped run counts once), or without
 * coalescing (GR_SPEAD_UDP_GRO=0 in the environment) per datagram in
 * packets_dropped_socket_overflow; datagrams larger than max_size in datagrams_oversize.
 *
 * Create it with stream::emplace_reader<udp_reader>(config), which starts it; the
 * stream's stop() ends it within a few milliseconds; the sockets close when the reader is
 * destroyed (with its stream).
 */
class SPEAD_API udp_reader : public transport_reader
{
public:
    /*! Opens, binds and configures the sockets and joins the groups.
     * \throws std::invalid_argument when the config has no endpoints
     * \throws std::system_error when a socket call fails (e.g. the port is in use) */
    udp_reader(stream& owner, const udp_config& config);
    /*! Reads from a duplicate of \p socket, a bound UDP socket its caller made
     * (spead2's socket form; the caller may close theirs at once): the config's
     * max_size and buffer_size apply, its endpoints and interface are not used.
     * \throws std::invalid_argument when \p socket is not a bound UDP socket */
    udp_reader(stream& owner, int socket, const udp_config& config);

    /*! Address and port each socket is bound to. */
    std::vector<boost::asio::ip::udp::endpoint> get_bound_endpoints() const;
    /*! Smallest receive buffer the kernel granted a socket, bytes. */
    std::size_t get_granted_buffer_size() const;

private:
    struct impl; //!< the sockets and the receive loop (udp_reader.cc)
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_UDP_H */
