/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_LINK_CONNECTION_H
#define INCLUDED_SPEAD_TRANSPORT_LINK_CONNECTION_H

#include "protocol/packet_writer.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_reader.h>
#include <poll.h>
#include <system_error>
#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace gr {
namespace spead {
namespace link {

/*!
 * The connected transports' side of the connected-link layer: what a transport (tcp,
 * rdma) provides so that connected_reader and connected_writer hold every semantic
 * (fan-in, admission, limits, back-pressure, dead peers, reconnection) once. Both
 * directions carry whole packets (messages): rdma's NIC delivers them into memory the
 * transport owns, tcp frames its byte stream into them (framed_incoming). Waits are
 * poll() on the descriptors these give; results are counts, or -errno (-EAGAIN when
 * nothing can be done now).
 */

/*! One accepted connection: the packets its peer sends. */
class SPEAD_API incoming
{
public:
    virtual ~incoming() = default;
    /*! Polled for POLLIN. */
    virtual int fd() const = 0;
    /*!
     * Up to \p n packets that arrived, oldest first, as views valid until release():
     * the count; -EAGAIN when none now; 0 once the peer closed cleanly and every whole
     * packet it sent was given (unfinished_bytes() says whether it stopped within
     * one); -errno when the connection failed: -EBADMSG the peer sent something that
     * is not a SPEAD packet, -EMSGSIZE a packet above max_packet_size,
     * -EPROTO it broke the transport's protocol (describe_ending() words each). The
     * packets that came before a failure are given first, and the failure at the next
     * call (ready() is then true).
     */
    virtual std::ptrdiff_t receive(recv::packet_view* packets, std::size_t n) = 0;
    /*! The packets of the last receive() are done with: their memory goes back (tcp:
     * its buffer; rdma: receives re-posted, credits returned). */
    virtual void release() = 0;
    /*! receive() has something to give (a failure found after the packets it gave)
     * that fd() may not announce: the reader calls it again before it waits. */
    virtual bool ready() const { return false; }
    /*! After receive() gave 0: bytes of a packet the peer began and never finished
     * (a byte stream's; a message transport has none). */
    virtual std::size_t unfinished_bytes() const { return 0; }
    /*! After receive() gave -EBADMSG, -EMSGSIZE or -EPROTO, or 0 with
     * unfinished_bytes(): the cause in the transport's words and the fix, for the log
     * (the reader counts the ending by its errno). */
    virtual std::string describe_ending(std::ptrdiff_t result) const;
};

/*! Asked with a connecting peer's address before its connection gets anything: true
 * admits it, false refuses it (the asker counts and logs the refusal). */
using admit_function = std::function<bool(const boost::asio::ip::address& peer)>;

/*!
 * accept() could not take a waiting connection for want of resources: descriptors
 * (EMFILE, ENFILE), memory (ENOMEM, ENOBUFS) or a registration. Only that connection
 * is affected (tcp: it waits on in the backlog; rdma: it is rejected); the reader
 * counts it (accept_failures), logs it once per burst and backs off.
 */
class SPEAD_API accept_failure : public std::system_error
{
public:
    using std::system_error::system_error;
};

/*! A listening endpoint. */
class SPEAD_API listener
{
public:
    virtual ~listener() = default;
    /*! Polled for POLLIN (a connection is waiting). */
    virtual int fd() const = 0;
    /*!
     * Takes one waiting connection. \p admit is asked with the peer's address before
     * the connection gets any resource (rdma: its queue pair, memory and
     * registrations; tcp: its buffer, and its data is acknowledged only from then on);
     * a refused one is closed (rejected) and the next waiting one taken. nullptr when
     * none waits.
     * \throws accept_failure when one connection could not be taken for want of
     *         resources
     * \throws std::system_error when the listener itself fails
     */
    virtual std::unique_ptr<incoming> accept(const admit_function& admit) = 0;
    /*!
     * While \p held (every slot taken), the data of connections that come is not
     * acknowledged to their senders until accept() admits them, so that a sender
     * refused later has counted nothing as delivered (tcp: a socket filter; rdma
     * commits nothing before accept(): nothing to do).
     */
    virtual void hold(bool held) { (void)held; }
    /*! "10.0.0.2:7148", for messages. */
    virtual std::string describe() const = 0;
};

/*! A connection made to a receiver. */
class SPEAD_API outgoing
{
public:
    virtual ~outgoing() = default;
    /*! Polled for room_events() when send() can take nothing. */
    virtual int fd() const = 0;
    /*!
     * Sends \p n packets in order, each as one message: the number taken (all their
     * bytes handed to the transport; their memory may be reused); 0 when it took part
     * of the first one only (a byte stream: call again starting with that packet);
     * -EAGAIN when it can take nothing now (wait: room_events() on fd(), at most
     * room_wait_ms()); -errno when the connection failed. Packets taken before a
     * failure are counted, and the failure is returned by the next call.
     */
    virtual std::ptrdiff_t send(const send::packet* packets, std::size_t n) = 0;
    /*! What fd() signals once send() may take more (tcp: POLLOUT, room in the socket;
     * rdma: POLLIN, a completion or credit). */
    virtual short room_events() const { return POLLOUT; }
    /*! The longest wait for room before send() is tried again, ms: room may come
     * back without an event on fd() (rdma's credits). */
    virtual int room_wait_ms() const { return 100; }
    /*! Send buffer the kernel granted, bytes (0 if not applicable). */
    virtual std::size_t granted_buffer() const { return 0; }
    /*!
     * Bytes of the packets taken by send() that the peer has not acknowledged yet
     * (tcp: still in the send queue, SIOCOUTQ; rdma: messages without a completion),
     * or -errno when that cannot be known. It must stay answerable after the
     * connection failed (what the peer had acknowledged before). A heap counts as sent
     * once all its bytes are acknowledged. Called once per batch, not per packet.
     */
    virtual std::ptrdiff_t unacknowledged() const = 0;
    /*! The error that failed the connection (SO_ERROR), once poll() reported
     * POLLERR/POLLHUP on fd(); 0 if none is pending. */
    virtual int pending_error() const { return 0; }
    /*!
     * For a transport that sees its peer go while nothing is sent (rdma: the CM's
     * DISCONNECTED): calls \p gone with the errno, once, from a thread of its own,
     * until this connection is destroyed. Default: nothing (tcp sees it at the next
     * send or acknowledgment poll).
     */
    virtual void watch(std::function<void(int)> gone) { (void)gone; }
    /*!
     * Called about once a second while the writer idles: checks that the peer still
     * answers. 0 while it does (or cannot be told yet), else the errno that failed the
     * connection. rdma: a zero-length RDMA write, which a dead path fails with RC retry
     * exhaustion; tcp: the error the kernel's keepalive probes left on the socket.
     */
    virtual int keep_alive() { return 0; }
};

/*! Makes connections to one receiver. */
class SPEAD_API dialer
{
public:
    virtual ~dialer() = default;
    /*!
     * Connects, waiting at most \p timeout, and returns early (throwing) when \p abort_fd
     * becomes readable. \throws std::system_error whose message names the endpoint and
     * the cause (refused, timed out, unreachable)
     */
    virtual std::unique_ptr<outgoing> connect(std::chrono::milliseconds timeout,
                                              int abort_fd) = 0;
    /*! "10.0.0.2:7148", for messages. */
    virtual std::string describe() const = 0;
};

/*! The fix to suggest for a connection error (errno). */
SPEAD_API std::string connection_advice(int err);

} // namespace link
} // namespace spead
} // namespace gr

#endif
