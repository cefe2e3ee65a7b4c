/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_TCP_SOCKET_H
#define INCLUDED_SPEAD_TRANSPORT_TCP_SOCKET_H

#include "common/file_descriptor.h"
#include "tcp_admission_filter.h"
#include "transport/link/connection.h"
#include <gnuradio/spead/api.h>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <string>

namespace gr {
namespace spead {
namespace transport {

/*! The address \p fd is bound to. \throws std::system_error */
SPEAD_API boost::asio::ip::tcp::endpoint local_endpoint(int fd);

/*! "10.0.0.2:7148" or "[::1]:7148" */
SPEAD_API std::string describe(const boost::asio::ip::tcp::endpoint& ep);

/*!
 * Dead-peer detection on a connected socket: keepalive probes while idle
 * (SO_KEEPALIVE, TCP_KEEPIDLE/INTVL/CNT) and TCP_USER_TIMEOUT for unacknowledged data,
 * so that a silent peer fails the connection (ETIMEDOUT) within about \p timeout plus
 * a second. 0 leaves the kernel's defaults. \throws std::system_error
 */
SPEAD_API void set_peer_timeout(int fd, std::chrono::milliseconds timeout);

/*!
 * A listening TCP socket (non-blocking) and its accepted connections. Its backlog is
 * the kernel's limit (net.core.somaxconn): a burst of connections completes its
 * handshakes rather than waiting for SYN retries. The data of peers outside
 * \p allowed_peers, and of every peer while hold(), is not acknowledged before
 * accept() admits it (admission_filter).
 */
class SPEAD_API tcp_listener : public link::listener
{
public:
    /*! Binds and listens; \p buffer_size (SO_RCVBUF, 0 = kernel's) and \p peer_timeout
     * go to every accepted connection, whose packets are framed up to
     * \p max_packet_size (framed_incoming). \throws std::system_error */
    tcp_listener(const boost::asio::ip::tcp::endpoint& endpoint,
                 std::size_t buffer_size,
                 std::chrono::milliseconds peer_timeout,
                 std::size_t max_packet_size,
                 const peer_filter& allowed_peers = peer_filter());
    /*! On a socket already listening (adopt_socket()), the rest as above; connections
     * already in its backlog came before the admission filter. */
    tcp_listener(file_descriptor listening,
                 std::size_t buffer_size,
                 std::chrono::milliseconds peer_timeout,
                 std::size_t max_packet_size,
                 const peer_filter& allowed_peers = peer_filter());
    ~tcp_listener() override;

    int fd() const override { return d_fd.get(); }
    /*! \throws link::accept_failure for EMFILE, ENFILE, ENOBUFS and ENOMEM (the
     * connection waits on in the backlog) */
    std::unique_ptr<link::incoming> accept(const link::admit_function& admit) override;
    void hold(bool held) override;
    std::string describe() const override;
    boost::asio::ip::tcp::endpoint bound_endpoint() const { return d_bound; }

private:
    file_descriptor d_fd;
    boost::asio::ip::tcp::endpoint d_bound;
    std::chrono::milliseconds d_peer_timeout;
    std::size_t d_max_packet_size;
    std::unique_ptr<admission_filter> d_filter;
};

/*! Connects to one TCP receiver (non-blocking connect, poll with a timeout). */
class SPEAD_API tcp_dialer : public link::dialer
{
public:
    tcp_dialer(const boost::asio::ip::tcp::endpoint& endpoint,
               const std::string& interface,
               std::size_t buffer_size,
               std::chrono::milliseconds peer_timeout);

    std::unique_ptr<link::outgoing> connect(std::chrono::milliseconds timeout,
                                            int abort_fd) override;
    std::string describe() const override;

private:
    boost::asio::ip::tcp::endpoint d_endpoint;
    std::string d_interface;
    std::size_t d_buffer_size;
    std::chrono::milliseconds d_peer_timeout;
};

/*! The connection its caller made (spead2's TcpStream(thread_pool, socket)): the
 * first connect() hands it over; it cannot be made again, so a later one (reconnect)
 * fails with ENOTCONN. */
class SPEAD_API tcp_connected_dialer : public link::dialer
{
public:
    /*! \p connected: see adopt_socket() \throws std::system_error */
    tcp_connected_dialer(file_descriptor connected,
                         std::chrono::milliseconds peer_timeout);

    std::unique_ptr<link::outgoing> connect(std::chrono::milliseconds timeout,
                                            int abort_fd) override;
    std::string describe() const override;

private:
    file_descriptor d_fd; //!< until the first connect()
    boost::asio::ip::tcp::endpoint d_peer;
};

} // namespace transport
} // namespace spead
} // namespace gr

#endif
