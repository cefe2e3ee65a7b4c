/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/packetiser.h"
#include "socket_buffer.h"
#include "transport/endpoint.h"
#include "transport/file_descriptor.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/send_udp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <system_error>
#include <algorithm>
#include <bitset>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {
namespace send {

namespace {

using boost::asio::ip::udp;
using transport::file_descriptor;
using steady = std::chrono::steady_clock;

/*! Bytes of IPv4 and UDP header in front of each SPEAD packet. */
constexpr std::size_t ip_udp_header = 20 + 8;
/*! Packets per sendmmsg(): the send stream never hands over more at once. */
constexpr std::size_t max_batch = 64;
/*! How long a full socket or device queue may hold the writer up before the batch
 * fails: long enough for any real congestion, short enough to report a dead link. */
constexpr auto stall_limit = std::chrono::seconds(5);

[[noreturn]] void throw_errno(const std::string& what)
{
    throw std::system_error(errno, std::generic_category(), what);
}

void set_int_option(int fd, int level, int option, int value, const char* what)
{
    if (setsockopt(fd, level, option, &value, sizeof(value)) != 0)
        throw_errno(std::string("setsockopt ") + what);
}

void set_multicast_interface(int fd, const transport::network_interface& iface)
{
    ip_mreqn mreq{};
    mreq.imr_address.s_addr = htonl(iface.address.to_uint());
    mreq.imr_ifindex = static_cast<int>(iface.index);
    if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &mreq, sizeof(mreq)) != 0)
        throw_errno("setsockopt IP_MULTICAST_IF " + iface.name);
}

} // namespace

struct udp_stream::impl {
    impl(const stream_config& config, const udp_config& udp);
    /*! Refuses a packet size the path to a destination cannot carry unfragmented. */
    void check_path_mtu(const stream_config& config,
                        const std::optional<transport::network_interface>& iface) const;
    void log_error_once(int err, const std::string& text);

    gr::logger logger;
    file_descriptor fd;
    std::vector<sockaddr_in> destinations; //!< by substream
    std::vector<udp::endpoint> endpoints;
    std::size_t granted_buffer = 0;
    std::size_t max_packet_size;

    // batch scratch, allocated once (iovecs grow only if a packet has unusually many
    // pieces, then keep their capacity)
    std::vector<mmsghdr> messages;
    std::vector<iovec> iovecs;
    std::vector<std::size_t> iovec_begin;
    std::vector<std::uint8_t> bounce; //!< packets with more pieces than IOV_MAX
    std::bitset<256> logged_errors;
};

udp_stream::impl::impl(const stream_config& config, const udp_config& udp)
    : logger("spead udp_stream"),
      endpoints(udp.get_endpoints()),
      max_packet_size(config.get_max_packet_size()),
      messages(max_batch),
      iovec_begin(max_batch)
{
    if (endpoints.empty())
        throw std::invalid_argument(
            "endpoints: none given; set at least one destination, e.g. 239.1.2.3:7148");
    iovecs.reserve(max_batch * 8);
    for (const auto& ep : endpoints)
        destinations.push_back(transport::to_sockaddr(ep));

    std::optional<transport::network_interface> iface;
    if (!udp.get_interface().empty())
        iface = transport::resolve_interface(udp.get_interface(), "interface");

    fd = file_descriptor(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd)
        throw_errno("socket");
    // Don't Fragment: a packet too big for the path fails instead of fragmenting.
    set_int_option(
        fd.get(), IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO, "IP_MTU_DISCOVER");
    set_int_option(
        fd.get(), IPPROTO_IP, IP_MULTICAST_TTL, udp.get_ttl(), "IP_MULTICAST_TTL");
    set_int_option(fd.get(), IPPROTO_IP, IP_TTL, udp.get_ttl(), "IP_TTL");
    if (iface) {
        set_multicast_interface(fd.get(), *iface);
        // Unicast then leaves with the interface's address as its source.
        const sockaddr_in source =
            transport::to_sockaddr(udp::endpoint(iface->address, 0));
        if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&source), sizeof(source)) !=
            0)
            throw_errno("bind " + iface->address.to_string());
    }
    granted_buffer = transport::request_socket_buffer(
        fd.get(), transport::buffer_direction::send, udp.get_buffer_size());
    if (granted_buffer < udp.get_buffer_size())
        logger.warn("{}",
                    transport::buffer_capped_advice(transport::buffer_direction::send,
                                                    udp.get_buffer_size(),
                                                    granted_buffer));
    check_path_mtu(config, iface);
}

void udp_stream::impl::check_path_mtu(
    const stream_config& config,
    const std::optional<transport::network_interface>& iface) const
{
    std::vector<udp::endpoint> checked;
    for (const auto& ep : endpoints) {
        if (std::find(checked.begin(), checked.end(), ep) != checked.end())
            continue;
        checked.push_back(ep);
        // A connected scratch socket tells the route's MTU without sending anything.
        file_descriptor probe(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        if (!probe)
            throw_errno("socket");
        if (iface)
            set_multicast_interface(probe.get(), *iface);
        const sockaddr_in dest = transport::to_sockaddr(ep);
        if (connect(
                probe.get(), reinterpret_cast<const sockaddr*>(&dest), sizeof(dest)) != 0)
            continue; // no route yet: sending will report it
        int mtu = 0;
        socklen_t len = sizeof(mtu);
        if (getsockopt(probe.get(), IPPROTO_IP, IP_MTU, &mtu, &len) != 0 || mtu <= 0)
            continue;
        if (config.get_max_packet_size() + ip_udp_header > static_cast<std::size_t>(mtu))
            throw std::invalid_argument(
                "max_packet_size: " + std::to_string(config.get_max_packet_size()) +
                " bytes + 28 bytes of IPv4/UDP header exceed the MTU of " +
                std::to_string(mtu) + " towards " + ep.address().to_string() +
                " and fragmenting is not allowed; use at most " +
                std::to_string(mtu - ip_udp_header) + " or raise the interface MTU");
    }
}

void udp_stream::impl::log_error_once(int err, const std::string& text)
{
    const std::size_t slot = static_cast<std::size_t>(err) % logged_errors.size();
    if (logged_errors.test(slot))
        return;
    logged_errors.set(slot);
    logger.error("{}", text);
}

udp_stream::udp_stream(boost::asio::io_context& io,
                       const stream_config& config,
                       const udp_config& udp_config)
    : stream(io, config, udp_config.get_endpoints().size()),
      d_impl(std::make_unique<impl>(config, udp_config))
{
    start_writer();
}

udp_stream::~udp_stream() { stop_writer(); }

std::size_t udp_stream::get_granted_buffer_size() const { return d_impl->granted_buffer; }

std::size_t udp_stream::write_packets(const packet* packets,
                                      std::size_t n,
                                      boost::system::error_code& ec)
{
    impl& d = *d_impl;
    n = std::min(n, max_batch);
    d.iovecs.clear();
    for (std::size_t i = 0; i < n; i++) {
        const packet& p = packets[i];
        d.iovec_begin[i] = d.iovecs.size();
        if (p.n_pieces <= IOV_MAX) {
            for (std::size_t j = 0; j < p.n_pieces; j++)
                d.iovecs.push_back(
                    { const_cast<std::uint8_t*>(p.pieces[j].data), p.pieces[j].length });
        } else {
            // Too many pieces for one sendmsg: gather into one buffer instead.
            if (d.bounce.size() < max_batch * d.max_packet_size)
                d.bounce.resize(max_batch * d.max_packet_size);
            std::uint8_t* out = d.bounce.data() + i * d.max_packet_size;
            std::size_t offset = 0;
            for (std::size_t j = 0; j < p.n_pieces; j++) {
                std::memcpy(out + offset, p.pieces[j].data, p.pieces[j].length);
                offset += p.pieces[j].length;
            }
            d.iovecs.push_back({ out, offset });
        }
    }
    for (std::size_t i = 0; i < n; i++) {
        msghdr& hdr = d.messages[i].msg_hdr;
        hdr.msg_name = &d.destinations[packets[i].substream];
        hdr.msg_namelen = sizeof(sockaddr_in);
        hdr.msg_iov = d.iovecs.data() + d.iovec_begin[i];
        hdr.msg_iovlen =
            (i + 1 < n ? d.iovec_begin[i + 1] : d.iovecs.size()) - d.iovec_begin[i];
        hdr.msg_control = nullptr;
        hdr.msg_controllen = 0;
        hdr.msg_flags = 0;
    }

    std::size_t sent = 0;
    auto last_progress = steady::now();
    while (sent < n) {
        const int r = sendmmsg(d.fd.get(), d.messages.data() + sent, n - sent, 0);
        if (r > 0) {
            sent += static_cast<std::size_t>(r);
            last_progress = steady::now();
            continue;
        }
        const int err = r < 0 ? errno : EIO;
        if (err == EINTR)
            continue;
        if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
            // Socket buffer (EAGAIN) or device queue (ENOBUFS) full: wait, don't fail.
            if (steady::now() - last_progress > stall_limit) {
                ec = boost::system::error_code(err, boost::system::system_category());
                d.log_error_once(err,
                                 "sending stalled for 5 s (" +
                                     std::string(std::strerror(err)) +
                                     "): is the link down?");
                return sent;
            }
            if (err == ENOBUFS) {
                // poll() cannot tell when the device queue drains.
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            } else {
                pollfd pfd{ d.fd.get(), POLLOUT, 0 };
                poll(&pfd, 1, 100);
            }
            continue;
        }
        ec = boost::system::error_code(err, boost::system::system_category());
        const packet& failed = packets[sent];
        std::string text = "sending a " + std::to_string(failed.size) +
                           "-byte packet to " +
                           d.endpoints[failed.substream].address().to_string() + ":" +
                           std::to_string(d.endpoints[failed.substream].port()) +
                           " failed: " + std::strerror(err);
        if (err == EMSGSIZE)
            text += " (larger than the path MTU: lower max_packet_size)";
        d.log_error_once(err, text);
        return sent;
    }
    return sent;
}

} // namespace send
} // namespace spead
} // namespace gr
