/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// rdma::listener and rdma::dialer: rdma_cm's listen/accept and resolve/connect, each
// connection on its own event channel and queue.

#include "rdma_link.h"
#include <gnuradio/logger.h>
#include <netinet/in.h>
#include <poll.h>
#include <system_error>
#include <cerrno>
#include <cstring>

namespace gr {
namespace spead {
namespace rdma {

namespace {
sockaddr_in to_sockaddr(const boost::asio::ip::address_v4& a, std::uint16_t port)
{
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(a.to_uint());
    sin.sin_port = htons(port);
    return sin;
}

std::string describe_address(const boost::asio::ip::address_v4& a, std::uint16_t port)
{
    return "verbs://" + (a.is_unspecified() ? std::string() : a.to_string()) + ":" +
           std::to_string(port);
}

[[noreturn]] void fail(const std::string& what, int err)
{
    // what() appends ": <strerror>".
    throw std::system_error(
        err, std::generic_category(), what + " (" + link::connection_advice(err) + ")");
}

/*! Waits for the next CM event on \p channel: \p expected, or throws naming \p what. */
void expect_event(rdma_event_channel* channel,
                  rdma_cm_event_type expected,
                  std::chrono::steady_clock::time_point deadline,
                  int abort_fd,
                  const std::string& what,
                  accept_data* grant)
{
    for (;;) {
        rdma_cm_event* event = nullptr;
        if (rdma_get_cm_event(channel, &event) == 0) {
            const rdma_cm_event_type type = event->event;
            const int status = event->status;
            if (type == expected && grant) {
                std::memset(grant, 0, sizeof(*grant));
                std::memcpy(grant,
                            event->param.conn.private_data,
                            std::min<std::size_t>(event->param.conn.private_data_len,
                                                  sizeof(*grant)));
            }
            rdma_ack_cm_event(event);
            if (type == expected)
                return;
            switch (type) {
            case RDMA_CM_EVENT_REJECTED:
                fail(what + " (rejected)", ECONNREFUSED);
            case RDMA_CM_EVENT_UNREACHABLE:
                fail(what, status == -ETIMEDOUT ? ETIMEDOUT : EHOSTUNREACH);
            case RDMA_CM_EVENT_ADDR_ERROR:
            case RDMA_CM_EVENT_ROUTE_ERROR:
                fail(what + " (" + rdma_event_str(type) + ")", EHOSTUNREACH);
            default:
                fail(what + " (" + rdma_event_str(type) + ")", ECONNRESET);
            }
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            fail(what + " (rdma_get_cm_event)", errno);
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            fail(what, ETIMEDOUT);
        pollfd fds[2] = { { channel->fd, POLLIN, 0 }, { abort_fd, POLLIN, 0 } };
        ::poll(fds, 2, int(left.count()));
        if (fds[1].revents)
            throw std::system_error(ECANCELED, std::generic_category(), what);
    }
}
} // namespace

listener::listener(const boost::asio::ip::address_v4& address,
                   std::uint16_t port,
                   const listen_settings& settings)
    : d_settings(settings), d_address(address), d_port(port)
{
    check_max_packet_size(settings.max_packet_size,
                          device_max_message(address,
                                             settings.address_parameter,
                                             settings.address_shown.empty()
                                                 ? address.to_string()
                                                 : settings.address_shown));
    d_channel = create_event_channel();
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(d_channel.get(), &id, nullptr, RDMA_PS_TCP) != 0)
        ibv::throw_error("rdma_create_id", errno ? errno : ENODEV);
    d_id.reset(id);
    sockaddr_in sin = to_sockaddr(address, port);
    if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&sin)) != 0)
        ibv::throw_error("rdma_bind_addr(" + describe() + ")",
                         errno,
                         "is the port in use, or the address not this host's?");
    if (rdma_listen(id, 64) != 0)
        ibv::throw_error("rdma_listen(" + describe() + ")", errno);
}

std::string listener::describe() const { return describe_address(d_address, d_port); }

std::unique_ptr<link::incoming> listener::accept(const link::admit_function& admit)
{
    for (;;) {
        rdma_cm_event* event = nullptr;
        if (rdma_get_cm_event(d_channel.get(), &event) != 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return nullptr;
            ibv::throw_error("rdma_get_cm_event(" + describe() + ")", errno);
        }
        if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
            rdma_ack_cm_event(event); // ESTABLISHED of ids not yet migrated, etc.
            continue;
        }
        rdma_cm_id* raw = event->id;
        connect_data wanted{};
        std::memcpy(
            &wanted,
            event->param.conn.private_data,
            std::min<std::size_t>(event->param.conn.private_data_len, sizeof(wanted)));
        rdma_ack_cm_event(event);
        ibv::cm_id_ptr id(raw); // a request refused here is rejected, then destroyed
        boost::asio::ip::address_v4 peer;
        const sockaddr* from = rdma_get_peer_addr(raw);
        if (from && from->sa_family == AF_INET)
            peer = boost::asio::ip::address_v4(
                ntohl(reinterpret_cast<const sockaddr_in*>(from)->sin_addr.s_addr));
        // Admission on the request itself: nothing (queue pair, memory, registration)
        // is made for a peer that is not let in.
        if (wanted.magic != wire_magic || !admit(peer)) {
            rdma_reject(raw, nullptr, 0);
            continue;
        }
        // A resource that fails (memory, registration, migration) fails this
        // connection only: rejected (destroyed with its queue, once it has one).
        std::string failed;
        int err = 0;
        try {
            if (auto in = make_incoming(id, peer, wanted))
                return in;
            continue; // the peer went away meanwhile
        } catch (const std::system_error& e) {
            failed = e.what();
            err = e.code().value();
        } catch (const std::bad_alloc&) {
            failed = "out of memory";
            err = ENOMEM;
        }
        if (id)
            rdma_reject(raw, nullptr, 0);
        throw link::accept_failure(err,
                                   std::generic_category(),
                                   "accepting " + peer.to_string() + " on " + describe() +
                                       ": " + failed);
    }
}

std::unique_ptr<incoming> listener::make_incoming(ibv::cm_id_ptr& id,
                                                  const boost::asio::ip::address_v4& peer,
                                                  const connect_data& wanted)
{
    rdma_cm_id* raw = id.get();
    auto channel = create_event_channel();
    if (rdma_migrate_id(raw, channel.get()) != 0)
        ibv::throw_error("rdma_migrate_id", errno);
    const bool ring = d_settings.rdma_connections > *d_ring_users;
    auto q = std::make_unique<queue>(std::move(channel),
                                     std::move(id),
                                     std::uint32_t(2 * 16),
                                     std::uint32_t(d_settings.recv_depth),
                                     std::uint32_t(sizeof(released)));
    auto in = std::make_unique<incoming>(std::move(q), d_settings, ring, d_ring_users);
    rdma_conn_param param = conn_param(&in->grant(), sizeof(accept_data));
    if (rdma_accept(raw, &param) != 0)
        return nullptr; // the peer went away meanwhile; `in` cleans up
    in->set_peer(wanted);
    static gr::logger logger("spead rdma listener");
    if (ring)
        logger.info("{} uses the RDMA-write path: a ring of {} bytes, {} writes in "
                    "flight, then SendRecv",
                    peer.to_string(),
                    in->grant().ring_size,
                    in->grant().rdma_depth);
    else
        logger.info("{} uses SendRecv only ({} of rdma_connections {} use the ring)",
                    peer.to_string(),
                    *d_ring_users,
                    d_settings.rdma_connections);
    return in;
}

dialer::dialer(const boost::asio::ip::address_v4& address,
               std::uint16_t port,
               const boost::asio::ip::address_v4& local,
               std::size_t max_packet_size,
               std::size_t send_depth,
               std::size_t inline_bytes)
    : d_address(address),
      d_port(port),
      d_local(local),
      d_max_packet_size(max_packet_size),
      d_send_depth(send_depth),
      d_inline_bytes(inline_bytes)
{
    check_max_packet_size(max_packet_size,
                          device_max_message(local, "interface", local.to_string()));
}

std::string dialer::describe() const { return describe_address(d_address, d_port); }

std::unique_ptr<link::outgoing> dialer::connect(std::chrono::milliseconds timeout,
                                                int abort_fd)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const std::string what = "connecting to " + describe();
    auto channel = create_event_channel();
    rdma_cm_id* raw = nullptr;
    if (rdma_create_id(channel.get(), &raw, nullptr, RDMA_PS_TCP) != 0)
        ibv::throw_error("rdma_create_id", errno ? errno : ENODEV);
    ibv::cm_id_ptr id(raw);
    sockaddr_in src = to_sockaddr(d_local, 0);
    sockaddr_in dst = to_sockaddr(d_address, d_port);
    const int ms = int(std::max<long long>(1, timeout.count()));
    if (rdma_resolve_addr(raw,
                          d_local.is_unspecified() ? nullptr
                                                   : reinterpret_cast<sockaddr*>(&src),
                          reinterpret_cast<sockaddr*>(&dst),
                          ms) != 0)
        fail(what + " (rdma_resolve_addr)", errno);
    expect_event(
        channel.get(), RDMA_CM_EVENT_ADDR_RESOLVED, deadline, abort_fd, what, nullptr);
    if (rdma_resolve_route(raw, ms) != 0)
        fail(what + " (rdma_resolve_route)", errno);
    expect_event(
        channel.get(), RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, abort_fd, what, nullptr);
    rdma_event_channel* events = channel.get();
    // One send more than the depth: outgoing::keep_alive()'s write.
    auto q = std::make_unique<queue>(std::move(channel),
                                     std::move(id),
                                     std::uint32_t(d_send_depth + 1),
                                     1,
                                     std::uint32_t(d_inline_bytes));
    auto out = std::make_unique<outgoing>(std::move(q), d_max_packet_size, d_send_depth);
    const connect_data mine = out->advertise();
    rdma_conn_param param = conn_param(&mine, sizeof(mine));
    if (rdma_connect(raw, &param) != 0)
        fail(what + " (rdma_connect)", errno);
    accept_data grant{};
    expect_event(events, RDMA_CM_EVENT_ESTABLISHED, deadline, abort_fd, what, &grant);
    out->set_grant(grant, describe());
    return out;
}

} // namespace rdma
} // namespace spead
} // namespace gr
