/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "framed_incoming.h"
#include "tcp_socket.h"
#include "transport/network_interface.h"
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <system_error>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

namespace gr {
namespace spead {
namespace transport {

namespace {
using boost::asio::ip::tcp;

[[noreturn]] void throw_errno(int err, const std::string& what)
{
    throw std::system_error(err, std::generic_category(), what);
}

void set_int(int fd, int level, int option, int value, const char* what)
{
    if (setsockopt(fd, level, option, &value, sizeof(value)) != 0)
        throw_errno(errno, std::string("setsockopt ") + what);
}

void set_buffer(int fd, int option, std::size_t bytes, const char* what)
{
    if (bytes != 0)
        set_int(fd, SOL_SOCKET, option, int(bytes), what);
}

/*! An accepted socket: its bytes framed into packets (spead2's framing). */
class tcp_incoming : public framed_incoming
{
public:
    tcp_incoming(file_descriptor fd, std::size_t max_packet_size)
        : framed_incoming(max_packet_size), d_fd(std::move(fd))
    {
    }
    int fd() const override { return d_fd.get(); }

protected:
    std::ptrdiff_t read_bytes(std::uint8_t* buffer, std::size_t size) override
    {
        const ssize_t r = ::recv(d_fd.get(), buffer, size, MSG_DONTWAIT);
        if (r >= 0)
            return r;
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }

private:
    file_descriptor d_fd;
};

/*! A connected socket: packets written back to back, many in one sendmsg(). */
class tcp_outgoing : public link::outgoing
{
public:
    tcp_outgoing(file_descriptor fd, std::size_t granted)
        : d_fd(std::move(fd)), d_granted(granted)
    {
    }
    int fd() const override { return d_fd.get(); }
    std::ptrdiff_t send(const send::packet* packets, std::size_t n) override
    {
        // Every piece of the batch in one call (up to IOV_MAX), less what an earlier
        // call wrote of the first packet.
        d_iov.clear();
        std::size_t whole = 0;       // packets all of whose pieces are in d_iov
        std::size_t whole_bytes = 0; // their bytes
        bool more = true;
        if (d_sent_of_first > 0 && (more = append(packets[0], d_sent_of_first))) {
            whole = 1;
            whole_bytes = packets[0].size;
        }
        for (; more && whole < n; whole++) {
            const send::packet& p = packets[whole];
            if (d_iov.size() + p.n_pieces > IOV_MAX)
                break;
            for (std::size_t j = 0; j < p.n_pieces; j++)
                d_iov.push_back(
                    { const_cast<std::uint8_t*>(p.pieces[j].data), p.pieces[j].length });
            whole_bytes += p.size;
        }
        if (d_iov.empty()) // a packet of more pieces than one call takes: its first ones
            append(packets[0], 0);
        msghdr msg{};
        msg.msg_iov = d_iov.data();
        msg.msg_iovlen = d_iov.size();
        const ssize_t r = ::sendmsg(d_fd.get(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (r < 0)
            return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        std::size_t written = d_sent_of_first + std::size_t(r);
        if (whole > 0 && written == whole_bytes) { // the usual case: all of it
            d_sent_of_first = 0;
            return std::ptrdiff_t(whole);
        }
        std::size_t taken = 0;
        while (taken < n && written >= packets[taken].size)
            written -= packets[taken++].size;
        d_sent_of_first = written;
        return std::ptrdiff_t(taken);
    }
    std::size_t granted_buffer() const override { return d_granted; }
    std::ptrdiff_t unacknowledged() const override
    {
        // write_seq - snd_una: unsent plus unacknowledged bytes; still valid once the
        // connection has failed (the kernel purges the queue, not the sequence numbers).
        // Less the start of a packet not yet taken: it is not the writer's yet.
        int bytes = 0;
        if (::ioctl(d_fd.get(), SIOCOUTQ, &bytes) != 0)
            return -errno;
        return std::max<std::ptrdiff_t>(0, bytes - std::ptrdiff_t(d_sent_of_first));
    }
    int pending_error() const override
    {
        int err = 0;
        socklen_t len = sizeof(err);
        if (::getsockopt(d_fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            return errno;
        return err;
    }
    /*! The error the kernel's keepalive probes (or a reset) left on the socket. */
    int keep_alive() override { return pending_error(); }

private:
    /*! Appends \p p's pieces from byte \p offset, up to IOV_MAX in all: true when
     * every one went in. */
    bool append(const send::packet& p, std::size_t offset)
    {
        std::size_t j = 0;
        for (; offset >= p.pieces[j].length; j++)
            offset -= p.pieces[j].length;
        for (; j < p.n_pieces && d_iov.size() < IOV_MAX; j++, offset = 0)
            d_iov.push_back({ const_cast<std::uint8_t*>(p.pieces[j].data) + offset,
                              p.pieces[j].length - offset });
        return j == p.n_pieces;
    }

    file_descriptor d_fd;
    std::size_t d_granted;
    std::size_t d_sent_of_first = 0; //!< bytes written of a packet not yet taken
    std::vector<iovec> d_iov;
};
} // namespace

tcp::endpoint local_endpoint(int fd)
{
    tcp::endpoint bound;
    socklen_t len = socklen_t(bound.capacity());
    if (::getsockname(fd, bound.data(), &len) != 0)
        throw_errno(errno, "getsockname");
    bound.resize(len);
    return bound;
}

std::string describe(const tcp::endpoint& ep)
{
    const std::string a = ep.address().to_string();
    return (ep.address().is_v6() ? "[" + a + "]" : a) + ":" + std::to_string(ep.port());
}

void set_peer_timeout(int fd, std::chrono::milliseconds timeout)
{
    if (timeout.count() == 0)
        return;
    const int seconds = int(std::max<long long>(1, timeout.count() / 2000));
    set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE");
    set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, seconds, "TCP_KEEPIDLE");
    set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, 1, "TCP_KEEPINTVL");
    set_int(fd,
            IPPROTO_TCP,
            TCP_KEEPCNT,
            int(std::max(1, int(timeout.count() / 1000))),
            "TCP_KEEPCNT");
    set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, int(timeout.count()), "TCP_USER_TIMEOUT");
}

tcp_listener::tcp_listener(const tcp::endpoint& endpoint,
                           std::size_t buffer_size,
                           std::chrono::milliseconds peer_timeout,
                           std::size_t max_packet_size,
                           const peer_filter& allowed_peers)
    : d_peer_timeout(peer_timeout), d_max_packet_size(max_packet_size)
{
    const int family = endpoint.address().is_v6() ? AF_INET6 : AF_INET;
    d_fd = file_descriptor(
        ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP));
    if (!d_fd)
        throw_errno(errno, "socket");
    set_int(d_fd.get(), SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
    // Set before listen(): accepted sockets inherit it, with a window scale to match.
    set_buffer(d_fd.get(), SO_RCVBUF, buffer_size, "SO_RCVBUF");
    if (::bind(d_fd.get(), endpoint.data(), socklen_t(endpoint.size())) != 0)
        throw_errno(errno,
                    "endpoint: cannot listen on " + transport::describe(endpoint) +
                        (errno == EADDRINUSE
                             ? " (the port is in use: stop the other receiver or "
                               "choose another port)"
                             : " (is the address one of this host's?)"));
    // Before listen(): the first connection to come inherits the filter.
    d_filter = std::make_unique<admission_filter>(d_fd.get(), allowed_peers);
    // The kernel caps the backlog at net.core.somaxconn: ask for all of it.
    if (::listen(d_fd.get(), INT_MAX) != 0)
        throw_errno(errno, "listen");
    d_bound = local_endpoint(d_fd.get());
}

tcp_listener::tcp_listener(file_descriptor listening,
                           std::size_t buffer_size,
                           std::chrono::milliseconds peer_timeout,
                           std::size_t max_packet_size,
                           const peer_filter& allowed_peers)
    : d_fd(std::move(listening)),
      d_bound(local_endpoint(d_fd.get())),
      d_peer_timeout(peer_timeout),
      d_max_packet_size(max_packet_size)
{
    // Accepted sockets inherit it (its window scale was fixed at listen(): a larger
    // buffer than then may not be used in full).
    set_buffer(d_fd.get(), SO_RCVBUF, buffer_size, "SO_RCVBUF");
    d_filter = std::make_unique<admission_filter>(d_fd.get(), allowed_peers);
}

tcp_listener::~tcp_listener() = default;

std::unique_ptr<link::incoming> tcp_listener::accept(const link::admit_function& admit)
{
    for (;;) {
        tcp::endpoint from;
        socklen_t len = socklen_t(from.capacity());
        const int fd =
            ::accept4(d_fd.get(), from.data(), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            const int err = errno;
            if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR ||
                err == ECONNABORTED)
                return nullptr;
            if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM)
                throw link::accept_failure(
                    err, std::generic_category(), "accept on " + describe());
            throw_errno(err, "accept on " + describe());
        }
        file_descriptor owned(fd);
        from.resize(len);
        if (!admit(from.address()))
            continue; // closed: its data was never acknowledged (the filter)
        // What fails now fails this connection only.
        try {
            d_filter->admit(fd);
            set_peer_timeout(fd, d_peer_timeout);
            return std::make_unique<tcp_incoming>(std::move(owned), d_max_packet_size);
        } catch (const std::system_error& e) {
            throw link::accept_failure(e.code(), e.what());
        } catch (const std::bad_alloc&) {
            throw link::accept_failure(
                ENOMEM, std::generic_category(), "accept on " + describe());
        }
    }
}

void tcp_listener::hold(bool held) { d_filter->hold(held); }

std::string tcp_listener::describe() const { return transport::describe(d_bound); }

tcp_connected_dialer::tcp_connected_dialer(file_descriptor connected,
                                           std::chrono::milliseconds peer_timeout)
    : d_fd(std::move(connected))
{
    tcp::endpoint peer;
    socklen_t len = socklen_t(peer.capacity());
    if (::getpeername(d_fd.get(), peer.data(), &len) != 0)
        throw_errno(errno, "getpeername");
    peer.resize(len);
    d_peer = peer;
    set_int(d_fd.get(), IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
    set_peer_timeout(d_fd.get(), peer_timeout);
}

std::string tcp_connected_dialer::describe() const { return transport::describe(d_peer); }

std::unique_ptr<link::outgoing> tcp_connected_dialer::connect(std::chrono::milliseconds,
                                                              int)
{
    if (!d_fd)
        throw_errno(ENOTCONN,
                    "connecting to " + describe() +
                        ": the stream was given a connected socket, which cannot be "
                        "connected again; make a new stream with a new socket");
    int granted = 0;
    socklen_t len = sizeof(granted);
    ::getsockopt(d_fd.get(), SOL_SOCKET, SO_SNDBUF, &granted, &len);
    return std::make_unique<tcp_outgoing>(std::move(d_fd), std::size_t(granted / 2));
}

tcp_dialer::tcp_dialer(const tcp::endpoint& endpoint,
                       const std::string& interface,
                       std::size_t buffer_size,
                       std::chrono::milliseconds peer_timeout)
    : d_endpoint(endpoint),
      d_interface(interface),
      d_buffer_size(buffer_size),
      d_peer_timeout(peer_timeout)
{
}

std::string tcp_dialer::describe() const { return transport::describe(d_endpoint); }

std::unique_ptr<link::outgoing> tcp_dialer::connect(std::chrono::milliseconds timeout,
                                                    int abort_fd)
{
    const std::string where = "connecting to " + describe();
    const int family = d_endpoint.address().is_v6() ? AF_INET6 : AF_INET;
    file_descriptor fd(
        ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP));
    if (!fd)
        throw_errno(errno, "socket");
    set_buffer(fd.get(), SO_SNDBUF, d_buffer_size, "SO_SNDBUF");
    set_int(fd.get(), IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
    if (!d_interface.empty()) {
        const auto iface = resolve_interface(d_interface, "interface");
        const tcp::endpoint local(iface.address, 0);
        if (::bind(fd.get(), local.data(), socklen_t(local.size())) != 0)
            throw_errno(errno, where + " from interface " + d_interface);
    }
    if (::connect(fd.get(), d_endpoint.data(), socklen_t(d_endpoint.size())) != 0) {
        if (errno != EINPROGRESS)
            throw_errno(errno, where + ": " + link::connection_advice(errno));
        pollfd fds[2] = { { fd.get(), POLLOUT, 0 }, { abort_fd, POLLIN, 0 } };
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0)
                throw_errno(ETIMEDOUT,
                            where + ": no answer within connect_timeout (" +
                                std::to_string(timeout.count()) +
                                " ms): is the receiver up, and the route and firewall "
                                "open?");
            const int r = ::poll(fds, abort_fd >= 0 ? 2 : 1, int(left.count()) + 1);
            if (r < 0 && errno != EINTR)
                throw_errno(errno, "poll");
            if (r > 0 && abort_fd >= 0 && fds[1].revents)
                throw_errno(ECANCELED, where + ": the stream is being destroyed");
            if (r > 0 && fds[0].revents)
                break;
        }
        int err = 0;
        socklen_t len = sizeof(err);
        if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err != 0)
            throw_errno(err, where + ": " + link::connection_advice(err));
    }
    set_peer_timeout(fd.get(), d_peer_timeout);
    int granted = 0;
    socklen_t len = sizeof(granted);
    ::getsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &granted, &len);
    return std::make_unique<tcp_outgoing>(std::move(fd), std::size_t(granted / 2));
}

} // namespace transport
} // namespace spead
} // namespace gr
