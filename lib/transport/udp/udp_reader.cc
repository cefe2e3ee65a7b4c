/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "common/file_descriptor.h"
#include "socket_buffer.h"
#include "transport/adopted_socket.h"
#include "transport/endpoint.h"
#include "transport/mapped_buffer.h"
#include "transport/network_interface.h"
#include "transport/wake_event.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_udp.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <system_error>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

// <linux/in6.h> has it (Linux 4.20), but clashes with <netinet/in.h>.
#ifndef IPV6_MULTICAST_ALL
#define IPV6_MULTICAST_ALL 29
#endif

namespace gr {
namespace spead {
namespace recv {

namespace {

using boost::asio::ip::udp;
using transport::mapped_buffer;

/*! Datagrams taken per recvmmsg(). */
constexpr unsigned int batch_size = 64;
/*! recvmmsg() calls per socket after a poll(), the sockets taking turns. */
constexpr int rounds_per_poll = 16;
/*! Upper bound on a poll() wait; stop() also wakes it through an eventfd. */
constexpr int poll_timeout_ms = 100;

/*! Largest UDP payload a message can carry: a coalesced (GRO) run of datagrams fills
 * at most one IP packet's worth. */
constexpr std::size_t max_coalesced_bytes = 65536;

/*! Control space for what comes with each message: the SO_RXQ_OVFL drop counter and,
 * for a coalesced run of datagrams, UDP_GRO's segment size. */
union control_buffer {
    char data[CMSG_SPACE(sizeof(std::uint32_t)) + CMSG_SPACE(sizeof(int))];
    cmsghdr align;
};

/*! Whether sockets ask for coalesced datagrams: yes, unless GR_SPEAD_UDP_GRO=0 (to
 * compare the two, or on a kernel whose GRO misbehaves). */
bool gro_wanted()
{
    const char* setting = std::getenv("GR_SPEAD_UDP_GRO");
    return !(setting && std::string(setting) == "0");
}

[[noreturn]] void throw_errno(const std::string& what)
{
    throw std::system_error(errno, std::generic_category(), what);
}

std::string describe(const udp::endpoint& ep) { return transport::to_string({ ep }); }

/*! Joins \p group's multicast group on \p fd, on the interface if one was given:
 * IP_ADD_MEMBERSHIP or IPV6_JOIN_GROUP. Returns setsockopt's result (errno set). */
int join_group(int fd,
               const udp::endpoint& group,
               const std::optional<transport::network_interface>& iface,
               unsigned int iface_index)
{
    if (group.address().is_v6()) {
        ipv6_mreq mreq{};
        const auto bytes = group.address().to_v6().to_bytes();
        std::memcpy(&mreq.ipv6mr_multiaddr, bytes.data(), bytes.size());
        mreq.ipv6mr_interface = iface_index; // 0: the kernel's choice by route
        return setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mreq, sizeof(mreq));
    }
    ip_mreqn mreq{};
    mreq.imr_multiaddr.s_addr = htonl(group.address().to_v4().to_uint());
    if (iface) {
        mreq.imr_address.s_addr = htonl(iface->address.to_uint());
        mreq.imr_ifindex = static_cast<int>(iface->index);
    }
    return setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq));
}

/*! Why a join failed with ENOBUFS after \p joined groups on one socket: Linux allows
 * each socket net.ipv4.igmp_max_memberships groups. */
std::string igmp_limit_hint(std::size_t joined)
{
    std::ifstream file("/proc/sys/net/ipv4/igmp_max_memberships");
    long limit = -1;
    file >> limit;
    const std::string value =
        file ? "is " + std::to_string(limit) : std::string("could not be read");
    return " (this socket has joined " + std::to_string(joined) +
           " groups; net.ipv4.igmp_max_memberships, the most one socket may join, " +
           value +
           ": raise it, e.g. sysctl -w net.ipv4.igmp_max_memberships=1024, or give "
           "fewer groups per port)";
}

} // namespace

struct udp_reader::impl : loop {
    /*! One bound socket and what it has told us about kernel drops. */
    struct socket_state {
        file_descriptor fd;
        udp::endpoint bound;
        mutable std::uint32_t last_drops = 0; //!< kernel's 32-bit cumulative drop counter
        bool coalescing = false; //!< UDP_GRO: a message may be a run of datagrams
    };

    /*! \p socket: one to adopt (see adopt_socket()), or -1 to open the config's */
    impl(udp_reader& self, const udp_config& config, int socket);
    void open_sockets();
    void adopt_socket(int socket);
    /*! Drop counting, coalescing and the buffer: what every socket is given.
     * \return the buffer the kernel granted */
    std::size_t configure(socket_state& s);
    /*! Lays out the receive batch once the sockets say whether they coalesce. */
    void allocate_batch();
    /*! Splits message \p i of a batch into its datagrams, onto views; \p drops
     * takes the kernel's drop count if the message carries it. */
    void take_message(unsigned int i, std::optional<std::uint32_t>& drops);
    /*! The reader's loop: receive_loop(), then drain_on_exit(). */
    void run() override;
    void wake() override;
    recv_stats stats() const override;
    /*! Waits for datagrams until stop() or the end of the stream. */
    void receive_loop();
    /*! One recvmmsg() on \p s, handed to the stream.
     * \return datagrams received; \p stream_open false once the stream has ended */
    unsigned int receive_batch(socket_state& s, bool& stream_open);
    /*! Reads the sockets poll() found ready, one batch each in turn, until they are
     * empty or rounds_per_poll batches each were taken.
     * \return false once the stream has ended */
    bool drain_ready(std::vector<pollfd>& fds);
    /*! On the way out: datagrams still queued go to the stream (which counts them in
     * packets_after_stop if it has ended), and the drop counters are read a last time,
     * so nothing that reached the socket goes uncounted. */
    void drain_on_exit();
    void note_drops(socket_state& s, std::uint32_t cumulative);
    /*! Adds drops the kernel counted since the last report (drops_mutex held). */
    void refresh_drops_locked(const socket_state& s) const;
    /*! Moves the socket's drop count to \p cumulative if that is newer. */
    void advance_drops_locked(const socket_state& s, std::uint32_t cumulative) const;

    udp_reader& self; //!< hands packets to the stream
    const udp_config config;
    gr::logger logger;
    std::vector<socket_state> sockets;
    transport::wake_event waker; //!< stop() ends a wait at once
    std::size_t granted_buffer = 0;

    // receive batch, allocated once
    mapped_buffer buffers; //!< pages of its own: see mapped_buffer.h
    std::vector<iovec> iovecs;
    std::vector<control_buffer> controls;
    std::vector<mmsghdr> messages;
    std::vector<packet_view> views;

    // counters: written by the thread, read by transport_stats()
    mutable std::mutex drops_mutex;            //!< guards last_drops and the two below
    mutable std::uint64_t packets_dropped = 0; //!< by sockets that do not coalesce
    mutable std::uint64_t runs_dropped = 0;    //!< by coalescing sockets
    bool drops_final = false; //!< the thread has ended: counters no longer move
    std::atomic<std::uint64_t> datagrams_oversize{ 0 };
};

udp_reader::impl::impl(udp_reader& self, const udp_config& config, int socket)
    : self(self), config(config), logger("spead udp_reader")
{
    if (socket >= 0) {
        adopt_socket(socket);
    } else {
        if (config.get_endpoints().empty())
            throw std::invalid_argument(
                "endpoints: none given; set at least one, e.g. 239.1.2.3:7148 or :7148");
        open_sockets();
    }
    if (granted_buffer < config.get_buffer_size())
        logger.warn("{}",
                    transport::buffer_capped_advice(transport::buffer_direction::receive,
                                                    config.get_buffer_size(),
                                                    granted_buffer));
    allocate_batch();
}

std::size_t udp_reader::impl::configure(socket_state& s)
{
    const int one = 1;
    if (setsockopt(s.fd.get(), SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) != 0)
        throw_errno("setsockopt SO_RXQ_OVFL");
    // Runs of datagrams of one flow come as one message (Linux 5.0): a sender's
    // segmentation offload is never undone on loopback, and a NIC's GRO merges
    // them too. Each message costs the kernel as much as a datagram did.
    // Refused by older kernels: then datagrams come one by one.
    s.coalescing = gro_wanted() &&
                   setsockopt(s.fd.get(), IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) == 0;
    return transport::request_socket_buffer(
        s.fd.get(), transport::buffer_direction::receive, config.get_buffer_size());
}

void udp_reader::impl::adopt_socket(int socket)
{
    socket_state s;
    s.fd = transport::adopt_socket(socket, transport::socket_role::bound_udp, "socket");
    granted_buffer = configure(s);
    socklen_t len = 0;
    const sockaddr_storage addr = transport::local_address(s.fd.get(), len);
    std::memcpy(s.bound.data(), &addr, len);
    s.bound.resize(len);
    sockets.push_back(std::move(s));
}

void udp_reader::impl::allocate_batch()
{
    // A coalescing socket hands over up to 64 KiB per message. Datagrams that come
    // one per message then lie 64 KiB apart, all in the same cache sets: each slot
    // starts a further 1536 bytes (a 1472-byte datagram's cache lines) along.
    bool coalescing = false;
    for (const auto& s : sockets)
        coalescing |= s.coalescing;
    const std::size_t slot_bytes =
        coalescing ? max_coalesced_bytes : config.get_max_size();
    const std::size_t stride = coalescing ? max_coalesced_bytes + 1536 : slot_bytes;
    buffers = mapped_buffer(std::size_t(batch_size) * stride);
    iovecs.resize(batch_size);
    controls.resize(batch_size);
    messages.resize(batch_size);
    views.reserve(coalescing ? std::size_t(batch_size) * 64 : batch_size);
    for (unsigned int i = 0; i < batch_size; i++) {
        iovecs[i].iov_base = buffers.data() + std::size_t(i) * stride;
        iovecs[i].iov_len = slot_bytes;
        std::memset(&messages[i], 0, sizeof(mmsghdr));
        messages[i].msg_hdr.msg_iov = &iovecs[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_control = controls[i].data;
    }
}

void udp_reader::impl::open_sockets()
{
    // One socket per port and IP version: a packet is read once however many
    // endpoints match it.
    std::map<std::pair<bool, unsigned short>, std::vector<udp::endpoint>> by_port;
    bool v4_groups = false;
    bool v6_groups = false;
    for (const auto& ep : config.get_endpoints()) {
        auto& list = by_port[{ ep.address().is_v6(), ep.port() }];
        if (std::find(list.begin(), list.end(), ep) == list.end())
            list.push_back(ep);
        (ep.address().is_v6() ? v6_groups : v4_groups) |= ep.address().is_multicast();
    }
    // IPv4 groups are joined on the interface's IPv4 address, IPv6 ones (as spead2)
    // on its index: each looked up only where groups of its version are joined.
    std::optional<transport::network_interface> iface;
    unsigned int iface_index = 0;
    if (!config.get_interface().empty() && v4_groups)
        iface = transport::resolve_interface(config.get_interface(), "interface");
    if (!config.get_interface().empty() && v6_groups)
        iface_index = transport::interface_index(config.get_interface(), "interface");

    std::size_t smallest_granted = 0;
    for (const auto& [key, endpoints] : by_port) {
        const auto [v6, port] = key;
        socket_state s;
        s.fd = file_descriptor(socket(
            v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        if (!s.fd)
            throw_errno(v6 ? "socket (IPv6: is IPv6 enabled on this host?)" : "socket");
        const int fd = s.fd.get();
        const int one = 1;
        const int zero = 0;

        bool any_multicast = false;
        for (const auto& ep : endpoints)
            any_multicast |= ep.address().is_multicast();
        // The only endpoint of its port: bind its address, so nothing else gets in.
        // Otherwise 0.0.0.0 (::), which takes every group joined below.
        const udp::endpoint bind_to =
            endpoints.size() == 1 ? endpoints.front()
            : v6 ? udp::endpoint(boost::asio::ip::address_v6::any(), port)
                 : udp::endpoint(boost::asio::ip::address_v4::any(), port);
        // An IPv6 socket takes IPv6 only: an IPv4 socket may serve the same port.
        if (v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0)
            throw_errno("setsockopt IPV6_V6ONLY");
        if (any_multicast) {
            // Other receivers of the same groups (other processes) may share the port.
            if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
                throw_errno("setsockopt SO_REUSEADDR");
            // Without this a 0.0.0.0 socket also gets groups that other sockets joined.
            const int rc =
                v6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_ALL, &zero, sizeof(zero))
                   : setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof(zero));
            if (rc != 0)
                throw_errno(v6 ? "setsockopt IPV6_MULTICAST_ALL"
                               : "setsockopt IP_MULTICAST_ALL");
        }
        const std::size_t granted = configure(s);
        smallest_granted =
            smallest_granted == 0 ? granted : std::min(smallest_granted, granted);

        if (bind(fd, bind_to.data(), static_cast<socklen_t>(bind_to.size())) != 0) {
            const int err = errno;
            std::string hint;
            if (err == EADDRINUSE)
                hint = " (another socket already receives on this port: is another "
                       "receiver running?)";
            else if (err == EADDRNOTAVAIL)
                hint = " (not an address of this host: give a local or multicast "
                       "address, or :" +
                       std::to_string(port) + " for all)";
            throw std::system_error(
                err, std::generic_category(), "bind " + describe(bind_to) + hint);
        }

        std::size_t joined = 0; // by this socket
        for (const auto& ep : endpoints) {
            if (!ep.address().is_multicast())
                continue;
            if (join_group(fd, ep, iface, iface_index) != 0) {
                const int err = errno;
                std::string hint;
                if (err == ENODEV)
                    hint = " (no route for multicast: give the interface, e.g. eth0)";
                else if (err == ENOBUFS)
                    hint = igmp_limit_hint(joined);
                throw std::system_error(
                    err,
                    std::generic_category(),
                    "join multicast group " + ep.address().to_string() +
                        (!config.get_interface().empty() ? " on " + config.get_interface()
                                                         : "") +
                        hint);
            }
            joined++;
        }
        s.bound = bind_to;
        sockets.push_back(std::move(s));
    }

    granted_buffer = smallest_granted;
}

void udp_reader::impl::note_drops(socket_state& s, std::uint32_t cumulative)
{
    std::lock_guard<std::mutex> lock(drops_mutex);
    advance_drops_locked(s, cumulative);
}

void udp_reader::impl::advance_drops_locked(const socket_state& s,
                                            std::uint32_t cumulative) const
{
    // The kernel's counter is 32 bits: the difference is right across a wrap. It may
    // also be behind: a datagram carries the count from when it was queued, and
    // transport_stats() may meanwhile have read a newer one (SO_MEMINFO). Only
    // forward moves count.
    const auto delta = static_cast<std::int32_t>(cumulative - s.last_drops);
    if (delta <= 0)
        return;
    // The kernel counts a message it drops once: on a coalescing socket that may be
    // a run of datagrams, how many it does not say.
    (s.coalescing ? runs_dropped : packets_dropped) += static_cast<std::uint32_t>(delta);
    s.last_drops = cumulative;
}

unsigned int udp_reader::impl::receive_batch(socket_state& s, bool& stream_open)
{
    stream_open = true;
    for (auto& m : messages) {
        // recvmmsg overwrites these: restore what the kernel may fill
        m.msg_hdr.msg_controllen = sizeof(control_buffer);
        m.msg_hdr.msg_flags = 0;
    }
    int got;
    do
        got = recvmmsg(s.fd.get(), messages.data(), batch_size, MSG_DONTWAIT, nullptr);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        // Nothing queued, or a passing shortage: try again at the next poll(). Any
        // other error would repeat at every poll(): the reader fails.
        const int err = errno;
        if (err == EAGAIN || err == EWOULDBLOCK || err == ENOMEM || err == ENOBUFS)
            return 0;
        throw std::system_error(err,
                                std::generic_category(),
                                "recvmmsg on " + describe(s.bound) +
                                    " (the socket is unusable; make the source again, "
                                    "or restart the flowgraph)");
    }

    views.clear();
    std::optional<std::uint32_t> drops;
    for (int i = 0; i < got; i++)
        take_message(static_cast<unsigned int>(i), drops);
    if (drops)
        note_drops(s, *drops);
    if (!views.empty())
        stream_open = self.add_packets(views.data(), views.size());
    return static_cast<unsigned int>(got);
}

void udp_reader::impl::take_message(unsigned int i, std::optional<std::uint32_t>& drops)
{
    msghdr& hdr = messages[i].msg_hdr;
    const std::size_t length = messages[i].msg_len;
    std::size_t segment = length; // one datagram, unless UDP_GRO says otherwise
    for (cmsghdr* c = CMSG_FIRSTHDR(&hdr); c; c = CMSG_NXTHDR(&hdr, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
            std::uint32_t value;
            std::memcpy(&value, CMSG_DATA(c), sizeof(value));
            drops = value; // cumulative: the latest one is all we need
        } else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int size;
            std::memcpy(&size, CMSG_DATA(c), sizeof(size));
            if (size > 0)
                segment = std::size_t(size);
        }
    }
    if (hdr.msg_flags & MSG_TRUNC) {
        // Only without coalescing: the slot is then max_size bytes.
        datagrams_oversize.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    // A run of datagrams of `segment` bytes, the last one possibly shorter; an empty
    // datagram is one too (the stream counts it as truncated).
    const auto* data = static_cast<const std::uint8_t*>(iovecs[i].iov_base);
    const std::size_t max_size = config.get_max_size();
    std::size_t offset = 0;
    do {
        const std::size_t size = std::min(segment, length - offset);
        if (size > max_size)
            datagrams_oversize.fetch_add(1, std::memory_order_relaxed);
        else
            views.push_back(packet_view{ data + offset, size });
        offset += segment;
    } while (offset < length);
}

bool udp_reader::impl::drain_ready(std::vector<pollfd>& fds)
{
    // One batch per socket per turn: heaps arriving on different ports then interleave
    // in the stream at most a batch apart. The assembler gives a heap until max_heaps
    // newer heaps have started; a long turn on one port would start many and push out
    // another port's half-received heap.
    for (int round = 0; round < rounds_per_poll; round++) {
        bool more = false;
        for (std::size_t i = 0; i < sockets.size(); i++) {
            if (fds[i].revents == 0)
                continue;
            bool stream_open = true;
            const unsigned int got = receive_batch(sockets[i], stream_open);
            if (!stream_open)
                return false;
            if (got < batch_size)
                fds[i].revents = 0; // empty for now
            else
                more = true;
        }
        if (!more)
            break;
    }
    return true;
}

void udp_reader::impl::drain_on_exit()
{
    // Bounded: a sender that keeps going must not keep the reader from stopping.
    constexpr int max_batches = 1024;
    for (auto& s : sockets) {
        for (int i = 0; i < max_batches; i++) {
            bool stream_open;
            if (receive_batch(s, stream_open) < batch_size)
                break;
        }
    }
    std::lock_guard<std::mutex> lock(drops_mutex);
    for (auto& s : sockets)
        refresh_drops_locked(s);
    drops_final = true;
}

void udp_reader::impl::refresh_drops_locked(const socket_state& s) const
{
    // Drops after the last datagram that arrived were not reported with one: ask the
    // kernel for its counter (the same one SO_RXQ_OVFL reports).
    std::uint32_t meminfo[SK_MEMINFO_VARS] = {};
    socklen_t len = sizeof(meminfo);
    if (getsockopt(s.fd.get(), SOL_SOCKET, SO_MEMINFO, meminfo, &len) == 0 &&
        len > SK_MEMINFO_DROPS * sizeof(std::uint32_t)) {
        advance_drops_locked(s, meminfo[SK_MEMINFO_DROPS]);
    }
}

void udp_reader::impl::run()
{
    try {
        receive_loop();
    } catch (...) {
        // The sockets cannot be read any more: count what the kernel dropped so far.
        std::lock_guard<std::mutex> lock(drops_mutex);
        for (auto& s : sockets)
            refresh_drops_locked(s);
        drops_final = true;
        throw;
    }
    drain_on_exit();
}

void udp_reader::impl::receive_loop()
{
    std::vector<pollfd> fds(sockets.size() + 1);
    for (std::size_t i = 0; i < sockets.size(); i++)
        fds[i] = { sockets[i].fd.get(), POLLIN, 0 };
    fds.back() = { waker.fd(), POLLIN, 0 };

    while (!waker.woken()) {
        const int ready = poll(fds.data(), fds.size(), poll_timeout_ms);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            throw std::system_error(
                errno,
                std::generic_category(),
                "poll on the udp sockets (the process is out of resources or the "
                "sockets were closed under the reader; make the source again)");
        }
        if (fds.back().revents)
            return; // stop() woke us
        if (!drain_ready(fds))
            return; // the stream ended (stop heap, or stop())
    }
}

void udp_reader::impl::wake() { waker.wake(); }

recv_stats udp_reader::impl::stats() const
{
    recv_stats out;
    out[recv_stat::datagrams_oversize] = datagrams_oversize.load();
    std::lock_guard<std::mutex> lock(drops_mutex);
    if (!drops_final)
        for (auto& s : sockets)
            refresh_drops_locked(s);
    out[recv_stat::packets_dropped_socket_overflow] = packets_dropped;
    out[recv_stat::runs_dropped_socket_overflow] = runs_dropped;
    return out;
}

udp_reader::udp_reader(stream& owner, const udp_config& config) : transport_reader(owner)
{
    set_loop(std::make_unique<impl>(*this, config, -1));
}

udp_reader::udp_reader(stream& owner, int socket, const udp_config& config)
    : transport_reader(owner)
{
    set_loop(std::make_unique<impl>(*this, config, socket));
}

std::vector<udp::endpoint> udp_reader::get_bound_endpoints() const
{
    std::vector<udp::endpoint> out;
    for (const auto& s : loop_as<impl>().sockets)
        out.push_back(s.bound);
    return out;
}

std::size_t udp_reader::get_granted_buffer_size() const
{
    return loop_as<impl>().granted_buffer;
}

} // namespace recv
} // namespace spead
} // namespace gr
