/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "common/file_descriptor.h"
#include "protocol/packet_writer.h"
#include "protocol/packetiser.h"
#include "socket_buffer.h"
#include "transport/adopted_socket.h"
#include "transport/endpoint.h"
#include "transport/network_interface.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/send_udp.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <system_error>
#include <algorithm>
#include <bitset>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {
namespace send {

namespace {

using boost::asio::ip::udp;
using steady = std::chrono::steady_clock;

/*! Bytes of IPv4 and UDP header in front of each SPEAD packet. */
constexpr std::size_t ip_udp_header = 20 + 8;
constexpr std::size_t ipv6_udp_header = 40 + 8;
/*! Packets per sendmmsg(): the send stream never hands over more at once. */
constexpr std::size_t max_batch = 64;
/*! How long a full socket or device queue may hold the writer up before the batch
 * fails: long enough for any real congestion, short enough to report a dead link. */
constexpr auto stall_limit = std::chrono::seconds(5);
/*! UDP GSO: segments per message (the kernel's UDP_MAX_SEGMENTS) and the largest
 * message (one IPv4 datagram's worth of UDP payload). */
constexpr std::size_t max_gso_segments = 64;
constexpr std::size_t max_gso_bytes = 65535 - ip_udp_header;

// packet pieces double as iovecs (see write_packets)
static_assert(sizeof(packet_piece) == sizeof(iovec) &&
                  offsetof(packet_piece, data) == offsetof(iovec, iov_base) &&
                  offsetof(packet_piece, length) == offsetof(iovec, iov_len) &&
                  sizeof(packet_piece::data) == sizeof(iovec::iov_base) &&
                  sizeof(packet_piece::length) == sizeof(iovec::iov_len),
              "packet_piece must have the layout of struct iovec");

/*! Control space for the UDP_SEGMENT size that goes with a GSO message. */
union gso_control {
    char data[CMSG_SPACE(sizeof(std::uint16_t))];
    cmsghdr align;
};

[[noreturn]] void throw_errno(const std::string& what)
{
    throw std::system_error(errno, std::generic_category(), what);
}

void set_int_option(int fd, int level, int option, int value, const char* what)
{
    if (setsockopt(fd, level, option, &value, sizeof(value)) != 0)
        throw_errno(std::string("setsockopt ") + what);
}

/*! The interface multicast leaves by: for IPv4 its address and index, for IPv6 (as
 * spead2) its index alone. */
struct multicast_interface {
    std::optional<transport::network_interface> v4;
    unsigned int v6_index = 0;
};

void set_multicast_interface(int fd, const transport::network_interface& iface);

void set_multicast_interface(int fd, const multicast_interface& iface)
{
    if (iface.v4)
        set_multicast_interface(fd, *iface.v4);
    else if (iface.v6_index != 0)
        set_int_option(fd,
                       IPPROTO_IPV6,
                       IPV6_MULTICAST_IF,
                       static_cast<int>(iface.v6_index),
                       "IPV6_MULTICAST_IF");
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

struct udp_stream::impl : packet_writer {
    /*! \p socket: one to adopt (see adopt_socket()), or -1 to open one */
    impl(const stream_config& config, const udp_config& udp, int socket);
    /*! Opens and configures the stream's own socket. */
    void open_socket(const udp_config& udp, bool v6, const multicast_interface& iface);
    /*! Sends from a duplicate of the caller's \p socket. */
    void adopt(int socket, bool v6);
    std::size_t write_packets(const packet* packets,
                              std::size_t n,
                              boost::system::error_code& ec) override;
    /*! Refuses a packet size the path to a destination cannot carry unfragmented. */
    void check_path_mtu(const stream_config& config,
                        const multicast_interface& iface) const;
    void log_error_once(int err, const std::string& text);
    /*! Groups packets [first, n) into messages: with GSO, runs of packets of one size
     * (the last may be shorter) to one substream become one message. */
    void build_messages(const packet* packets, std::size_t first, std::size_t n);

    gr::logger logger;
    file_descriptor fd;
    std::vector<udp::endpoint> destinations; //!< by substream (socket addresses)
    std::vector<udp::endpoint> endpoints;
    std::size_t granted_buffer = 0;
    std::size_t max_packet_size;

    // batch scratch, allocated once (iovecs grow only if a packet has unusually many
    // pieces, then keep their capacity)
    std::vector<mmsghdr> messages;
    std::vector<iovec> iovecs;
    iovec* iov = nullptr; //!< this batch's iovecs: iovecs, or the packets' own pieces
    std::vector<std::size_t> iovec_begin;
    std::vector<std::uint8_t> bounce; //!< packets with more pieces than IOV_MAX
    std::vector<gso_control> controls;
    std::vector<std::size_t> message_first; //!< first packet of each message, + end
    std::size_t n_messages = 0;
    std::bitset<256> logged_errors;

    /*!
     * Generic segmentation offload (UDP_SEGMENT, Linux 4.18): the kernel takes a run of
     * equal-sized packets as one message and cuts it into datagrams as late as it can,
     * so the stack runs once per message instead of once per packet. Off for good when
     * the kernel lacks it, or when a GSO send fails and the same packets then go out
     * one by one (no checksum offload on the device, or an MTU below the segments).
     */
    bool gso = false;
};

udp_stream::impl::impl(const stream_config& config, const udp_config& udp, int socket)
    : logger("spead udp_stream"),
      endpoints(udp.get_endpoints()),
      max_packet_size(config.get_max_packet_size()),
      messages(max_batch),
      iovec_begin(max_batch + 1),
      controls(max_batch),
      message_first(max_batch + 1)
{
    if (endpoints.empty())
        throw std::invalid_argument(
            "endpoints: none given; set at least one destination, e.g. 239.1.2.3:7148");
    iovecs.reserve(max_batch * 8);
    for (const auto& ep : endpoints) {
        if (udp.get_ttl() == 0 && !ep.address().is_multicast())
            throw std::invalid_argument(
                "ttl: 0 keeps multicast on this host, but " + ep.address().to_string() +
                " is a unicast destination, which needs a TTL of 1 to 255; give ttl=1 "
                "(the local network) or more");
        if (ep.address().is_v6() != endpoints.front().address().is_v6())
            throw std::invalid_argument(
                "endpoints: " + transport::to_string(endpoints) +
                " mixes IPv4 and IPv6 destinations, but a stream sends from one "
                "socket (as spead2's); use one stream per IP version");
        destinations.push_back(ep);
    }
    const bool v6 = endpoints.front().address().is_v6();

    multicast_interface iface;
    if (!udp.get_interface().empty() && !v6)
        iface.v4 = transport::resolve_interface(udp.get_interface(), "interface");
    if (!udp.get_interface().empty() && v6)
        iface.v6_index = transport::interface_index(udp.get_interface(), "interface");

    if (socket >= 0)
        adopt(socket, v6);
    else
        open_socket(udp, v6, iface);
    check_path_mtu(config, iface);
    // The socket option exists from Linux 4.18; each message sets its own size.
    const int no_segmentation = 0;
    gso =
        setsockopt(
            fd.get(), SOL_UDP, UDP_SEGMENT, &no_segmentation, sizeof(no_segmentation)) ==
        0;
}

void udp_stream::impl::open_socket(const udp_config& udp,
                                   bool v6,
                                   const multicast_interface& iface)
{
    fd = file_descriptor(
        socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd)
        throw_errno(v6 ? "socket (IPv6: is IPv6 enabled on this host?)" : "socket");
    if (v6) {
        // The IPv6 twins of the IPv4 options below.
        set_int_option(fd.get(),
                       IPPROTO_IPV6,
                       IPV6_MTU_DISCOVER,
                       IPV6_PMTUDISC_DO,
                       "IPV6_MTU_DISCOVER");
        set_int_option(fd.get(),
                       IPPROTO_IPV6,
                       IPV6_MULTICAST_HOPS,
                       udp.get_ttl(),
                       "IPV6_MULTICAST_HOPS");
        if (udp.get_ttl() > 0)
            set_int_option(fd.get(),
                           IPPROTO_IPV6,
                           IPV6_UNICAST_HOPS,
                           udp.get_ttl(),
                           "IPV6_UNICAST_HOPS");
        set_multicast_interface(fd.get(), iface);
    } else {
        // Don't Fragment: a packet too big for the path fails instead of fragmenting.
        set_int_option(
            fd.get(), IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO, "IP_MTU_DISCOVER");
        set_int_option(
            fd.get(), IPPROTO_IP, IP_MULTICAST_TTL, udp.get_ttl(), "IP_MULTICAST_TTL");
        // TTL 0 keeps multicast on this host; unicast has no such meaning (Linux takes
        // IP_TTL 1..255).
        if (udp.get_ttl() > 0)
            set_int_option(fd.get(), IPPROTO_IP, IP_TTL, udp.get_ttl(), "IP_TTL");
    }
    if (iface.v4) {
        set_multicast_interface(fd.get(), *iface.v4);
        // Unicast then leaves with the interface's address as its source.
        const sockaddr_in source =
            transport::to_sockaddr(udp::endpoint(iface.v4->address, 0));
        if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&source), sizeof(source)) !=
            0)
            throw_errno("bind " + iface.v4->address.to_string());
    }
    granted_buffer = transport::request_socket_buffer(
        fd.get(), transport::buffer_direction::send, udp.get_buffer_size());
    if (granted_buffer < udp.get_buffer_size())
        logger.warn("{}",
                    transport::buffer_capped_advice(transport::buffer_direction::send,
                                                    udp.get_buffer_size(),
                                                    granted_buffer));
}

void udp_stream::impl::adopt(int socket, bool v6)
{
    fd = transport::adopt_socket(socket, transport::socket_role::udp, "socket");
    int family = 0;
    socklen_t len = sizeof(family);
    getsockopt(fd.get(), SOL_SOCKET, SO_DOMAIN, &family, &len);
    if ((family == AF_INET6) != v6)
        throw std::invalid_argument(std::string("socket: an ") + (v6 ? "IPv4" : "IPv6") +
                                    " socket, but the "
                                    "endpoints are " +
                                    (v6 ? "IPv6" : "IPv4") +
                                    "; give a socket of their family");
    // Don't Fragment, as on the stream's own sockets; the caller's TTL, interface and
    // buffer size stay as they set them.
    if (v6)
        set_int_option(fd.get(),
                       IPPROTO_IPV6,
                       IPV6_MTU_DISCOVER,
                       IPV6_PMTUDISC_DO,
                       "IPV6_MTU_DISCOVER");
    else
        set_int_option(
            fd.get(), IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO, "IP_MTU_DISCOVER");
    int buffer = 0;
    len = sizeof(buffer);
    if (getsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &buffer, &len) == 0)
        granted_buffer = std::size_t(buffer / 2); // the kernel reports it doubled
}

void udp_stream::impl::check_path_mtu(const stream_config& config,
                                      const multicast_interface& iface) const
{
    std::vector<udp::endpoint> checked;
    for (const auto& ep : endpoints) {
        if (std::find(checked.begin(), checked.end(), ep) != checked.end())
            continue;
        checked.push_back(ep);
        // A connected scratch socket tells the route's MTU without sending anything.
        const bool v6 = ep.address().is_v6();
        file_descriptor probe(
            socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        if (!probe)
            throw_errno("socket");
        set_multicast_interface(probe.get(), iface);
        if (connect(probe.get(), ep.data(), static_cast<socklen_t>(ep.size())) != 0)
            continue; // no route yet: sending will report it
        int mtu = 0;
        socklen_t len = sizeof(mtu);
        if (getsockopt(probe.get(),
                       v6 ? IPPROTO_IPV6 : IPPROTO_IP,
                       v6 ? IPV6_MTU : IP_MTU,
                       &mtu,
                       &len) != 0 ||
            mtu <= 0)
            continue;
        const std::size_t header = v6 ? ipv6_udp_header : ip_udp_header;
        if (config.get_max_packet_size() + header > static_cast<std::size_t>(mtu))
            throw std::invalid_argument(
                "max_packet_size: " + std::to_string(config.get_max_packet_size()) +
                " bytes + " + std::to_string(header) + " bytes of " +
                (v6 ? "IPv6" : "IPv4") + "/UDP header exceed the MTU of " +
                std::to_string(mtu) + " towards " + ep.address().to_string() +
                " and fragmenting is not allowed; use at most " +
                std::to_string(mtu - header) + " or raise the interface MTU");
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
    : stream(io,
             config,
             udp_config.get_endpoints().size(),
             std::make_unique<impl>(config, udp_config, -1))
{
}

udp_stream::udp_stream(boost::asio::io_context& io,
                       const stream_config& config,
                       int socket,
                       const udp_config& udp_config)
    : stream(io,
             config,
             udp_config.get_endpoints().size(),
             std::make_unique<impl>(config, udp_config, socket))
{
}


std::size_t udp_stream::get_granted_buffer_size() const
{
    return static_cast<const impl&>(writer()).granted_buffer;
}

void udp_stream::impl::build_messages(const packet* packets,
                                      std::size_t first,
                                      std::size_t n)
{
    n_messages = 0;
    for (std::size_t i = first; i < n;) {
        const std::size_t segment = packets[i].size;
        std::size_t end = i + 1;
        std::size_t bytes = segment;
        if (gso) {
            while (end < n && end - i < max_gso_segments &&
                   packets[end].substream == packets[i].substream &&
                   packets[end].size <= segment &&
                   bytes + packets[end].size <= max_gso_bytes &&
                   iovec_begin[end + 1] - iovec_begin[i] <= IOV_MAX) {
                bytes += packets[end].size;
                end++;
                if (packets[end - 1].size < segment)
                    break; // only the last segment may be shorter
            }
        }
        msghdr& hdr = messages[n_messages].msg_hdr;
        udp::endpoint& destination = destinations[packets[i].substream];
        hdr.msg_name = destination.data();
        hdr.msg_namelen = static_cast<socklen_t>(destination.size());
        hdr.msg_iov = iov + iovec_begin[i];
        hdr.msg_iovlen = iovec_begin[end] - iovec_begin[i];
        hdr.msg_flags = 0;
        if (end - i > 1) {
            hdr.msg_control = controls[n_messages].data;
            hdr.msg_controllen = sizeof(controls[n_messages].data);
            cmsghdr* c = CMSG_FIRSTHDR(&hdr);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
            const auto size = static_cast<std::uint16_t>(segment);
            std::memcpy(CMSG_DATA(c), &size, sizeof(size));
        } else {
            hdr.msg_control = nullptr;
            hdr.msg_controllen = 0;
        }
        message_first[n_messages] = i;
        n_messages++;
        i = end;
    }
    message_first[n_messages] = n;
}

std::size_t udp_stream::impl::write_packets(const packet* packets,
                                            std::size_t n,
                                            boost::system::error_code& ec)
{
    impl& d = *this;
    n = std::min(n, max_batch);
    /* The send stream cuts a batch into one array of pieces, packet after packet, and
     * a piece is laid out as an iovec: then that array is the messages' iovec array,
     * and nothing is copied. Otherwise (another caller, or a packet with more pieces
     * than a message may have) the pieces are copied into iovecs. */
    bool in_place = true;
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; i++) {
        d.iovec_begin[i] = total;
        if (packets[i].n_pieces > IOV_MAX ||
            packets[i].pieces != packets[0].pieces + total)
            in_place = false;
        total += packets[i].n_pieces;
    }
    d.iovec_begin[n] = total;
    if (in_place && n > 0) {
        d.iov = reinterpret_cast<iovec*>(const_cast<packet_piece*>(packets[0].pieces));
    } else {
        d.iovecs.clear();
        for (std::size_t i = 0; i < n; i++) {
            const packet& p = packets[i];
            d.iovec_begin[i] = d.iovecs.size();
            if (p.n_pieces <= IOV_MAX) {
                for (std::size_t j = 0; j < p.n_pieces; j++) {
                    iovec& v = d.iovecs.emplace_back();
                    v.iov_base = const_cast<std::uint8_t*>(p.pieces[j].data);
                    v.iov_len = p.pieces[j].length;
                }
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
                iovec& v = d.iovecs.emplace_back();
                v.iov_base = out;
                v.iov_len = offset;
            }
        }
        d.iovec_begin[n] = d.iovecs.size();
        d.iov = d.iovecs.data();
    }
    d.build_messages(packets, 0, n);

    std::size_t sent = 0; // messages
    bool probing = false; // resending without GSO after a GSO send failed
    auto last_progress = steady::now();
    while (sent < d.n_messages) {
        const int r =
            sendmmsg(d.fd.get(), d.messages.data() + sent, d.n_messages - sent, 0);
        if (r > 0) {
            sent += static_cast<std::size_t>(r);
            last_progress = steady::now();
            if (probing) {
                // The same packets went out one by one: GSO was the problem.
                d.logger.info("UDP segmentation offload refused on this path; sending "
                              "datagram by datagram from now on");
                probing = false;
            }
            continue;
        }
        const int err = r < 0 ? errno : EIO;
        if (err == EINTR)
            continue;
        const std::size_t failed_first = d.message_first[sent];
        if ((err == EIO || err == EINVAL) && d.gso &&
            d.message_first[sent + 1] - failed_first > 1) {
            // No checksum offload, or segments above the MTU: retry without GSO.
            d.gso = false;
            probing = true;
            d.build_messages(packets, failed_first, n);
            sent = 0;
            continue;
        }
        if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
            // Socket buffer (EAGAIN) or device queue (ENOBUFS) full: wait, don't fail.
            if (steady::now() - last_progress > stall_limit) {
                ec = boost::system::error_code(err, boost::system::system_category());
                d.log_error_once(err,
                                 "sending stalled for 5 s (" +
                                     std::string(std::strerror(err)) +
                                     "): is the link down?");
                return failed_first;
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
        if (probing)
            d.gso = true; // failed without GSO too: the fault lies elsewhere
        ec = boost::system::error_code(err, boost::system::system_category());
        const packet& failed = packets[failed_first];
        std::string text = "sending a " + std::to_string(failed.size) +
                           "-byte packet to " +
                           d.endpoints[failed.substream].address().to_string() + ":" +
                           std::to_string(d.endpoints[failed.substream].port()) +
                           " failed: " + std::strerror(err);
        if (err == EMSGSIZE)
            text += " (larger than the path MTU: lower max_packet_size)";
        d.log_error_once(err, text);
        return failed_first;
    }
    return n;
}

} // namespace send
} // namespace spead
} // namespace gr
