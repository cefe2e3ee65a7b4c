/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_CONNECTION_H
#define INCLUDED_SPEAD_STREAMS_CONNECTION_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_reader.h>
#include <sys/uio.h>
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
 * The connected transports' side of the connected-link layer: what a transport (tcp
 * now, rdma later) provides so that connected_reader and connected_writer can hold
 * every semantic (fan-in, admission, framing limits, back-pressure, dead peers,
 * reconnection) once. Waits are poll() on the descriptors these give.
 *
 * Reads and writes return bytes done, or -errno (-EAGAIN when nothing can be done
 * now); 0 from read() is a clean close by the peer.
 */

class message_incoming;
class message_outgoing;

/*! One accepted connection, carrying the peer's packets as a byte stream. */
class SPEAD_API incoming
{
public:
    virtual ~incoming() = default;
    /*! Polled for POLLIN. */
    virtual int fd() const = 0;
    virtual std::ptrdiff_t read(std::uint8_t* buffer, std::size_t size) = 0;
    /*! The message form of this connection, or nullptr for a byte stream. */
    virtual message_incoming* message_form() { return nullptr; }
};

/*! A listening endpoint. */
class SPEAD_API listener
{
public:
    virtual ~listener() = default;
    /*! Polled for POLLIN (a connection is waiting). */
    virtual int fd() const = 0;
    /*! Takes one waiting connection and its peer's address; nullptr when none waits.
     * \throws std::system_error when the listener itself fails */
    virtual std::unique_ptr<incoming> accept(boost::asio::ip::address& peer) = 0;
    /*! "10.0.0.2:7148", for messages. */
    virtual std::string describe() const = 0;
};

/*! A connection made to a receiver. */
class SPEAD_API outgoing
{
public:
    virtual ~outgoing() = default;
    /*! Polled for POLLOUT (room to write). */
    virtual int fd() const = 0;
    virtual std::ptrdiff_t write(const iovec* iov, int n) = 0;
    /*! Send buffer the kernel granted, bytes (0 if not applicable). */
    virtual std::size_t granted_buffer() const { return 0; }
    /*! The message form of this connection, or nullptr for a byte stream. */
    virtual message_outgoing* message_form() { return nullptr; }
    /*!
     * Bytes written that the peer has not acknowledged yet (tcp: still in the send
     * queue, SIOCOUTQ), or -errno when that cannot be known. It must stay answerable
     * after the connection failed (what the peer had acknowledged before). A heap
     * counts as sent once all its bytes are acknowledged. Default 0: a transport whose
     * writes need no acknowledgment (or that has completions of its own) reports
     * everything acknowledged once written. Called once per batch, not per packet.
     */
    virtual std::ptrdiff_t unacknowledged() const { return 0; }
    /*! The error that failed the connection (SO_ERROR), once poll() reported
     * POLLERR/POLLHUP on fd(); 0 if none is pending. */
    virtual int pending_error() const { return 0; }
    /*!
     * For a transport that sees its peer go while nothing is sent (rdma: the CM's
     * DISCONNECTED): calls \p gone with the errno, once, from a thread of its own,
     * until this connection is destroyed. Default: nothing (tcp sees it at the next
     * write or acknowledgment poll).
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

/*
 * The message form, for transports whose connections carry whole packets into memory
 * they own (rdma: the NIC writes each message into a registered receive or ring), so
 * that the connected-link layer copies nothing: it hands views of that memory to the
 * stream, whose heaps copy the payload into the output, and then releases it. An
 * incoming/outgoing says which form it speaks with message_form(); the byte-stream
 * calls above are not used for a message-form connection and vice versa.
 */

/*! Message form of an accepted connection (see incoming::message_form()). */
class SPEAD_API message_incoming
{
public:
    virtual ~message_incoming() = default;
    /*!
     * Up to \p n packets that arrived, oldest first, as views valid until release():
     * the count, -EAGAIN when none now, 0 once the peer closed cleanly and everything
     * it sent was given, or -errno when the connection failed (-EPROTO: the peer broke
     * the protocol; -EMSGSIZE: a message above max_packet_size; -EBADMSG: a message
     * that is not a SPEAD packet).
     */
    virtual std::ptrdiff_t receive(recv::packet_view* packets, std::size_t n) = 0;
    /*! The packets of the last receive() are done with: their memory goes back to the
     * peer (receives re-posted, credits returned). */
    virtual void release() = 0;
};

/*! Message form of a connection to a receiver (see outgoing::message_form()). */
class SPEAD_API message_outgoing
{
public:
    virtual ~message_outgoing() = default;
    /*! Sends the \p n pieces of one packet (\p size bytes) as one message: 1 when
     * sent (the pieces' memory may be reused at once), -EAGAIN when the receiver has
     * granted no room yet (wait: fd() POLLIN, or the wait_hint), -errno on failure. */
    virtual std::ptrdiff_t send(const iovec* pieces, int n, std::size_t size) = 0;
    /*! How long to wait (poll on fd()) before retrying an -EAGAIN send, ms: credits
     * may come back without an event on fd(). */
    virtual int wait_hint_ms() const { return 1; }
};

/*! The fix to suggest for a connection error (errno). */
SPEAD_API std::string connection_advice(int err);

} // namespace link
} // namespace spead
} // namespace gr

#endif
