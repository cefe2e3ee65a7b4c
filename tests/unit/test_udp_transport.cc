/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The kernel UDP transport on 127.0.0.1: udp_config validation, send::udp_stream →
// recv::udp_reader moving real heaps, kernel drop and oversize counting, the buffer
// read-back warning, stop() and socket release. Counters must reconcile: packets sent =
// packets decoded + packets the kernel reported dropped.

#include "byte_helpers.h"
#include "common/file_descriptor.h"
#include "error_message.h"
#include "free_port.h"
#include "log_capture.h"
#include "protocol/packetiser.h"
#include "reconcile.h"
#include "transport/endpoint.h"
#include "transport/network_interface.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/send_udp.h>
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <boost/asio/io_context.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

using spead_test::capture_sink;
using spead_test::free_udp_port;

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using gr::spead::file_descriptor;
using steady = std::chrono::steady_clock;

constexpr std::uint64_t payload_id = 0x1000;

/*! Payload bytes of heap \p cnt: a pattern that differs per heap and per byte. */
std::uint8_t pattern_byte(std::uint64_t cnt, std::size_t i)
{
    return std::uint8_t((cnt * 131) ^ (i * 7) ^ (i >> 8));
}

struct test_heap {
    test_heap(std::uint64_t cnt, std::size_t size) : payload(size)
    {
        for (std::size_t i = 0; i < size; i++)
            payload[i] = pattern_byte(cnt, i);
        h.add_item(payload_id, payload.data(), payload.size(), false);
    }
    // The heap points into payload: a copy would point into the original's memory.
    // (Moving keeps the buffer; without this, std::vector would copy on growth.)
    test_heap(const test_heap&) = delete;
    test_heap(test_heap&&) = default;
    std::vector<std::uint8_t> payload;
    send::heap h;
};

/*! One SPEAD packet holding a whole small heap, as bytes for a plain socket. */
std::vector<std::uint8_t> single_packet_heap(std::uint64_t cnt, std::size_t size)
{
    const test_heap th(cnt, size);
    auto packets = spead_test::packetise(th.h, cnt, 9000);
    EXPECT_EQ(packets.size(), 1u);
    return packets.empty() ? std::vector<std::uint8_t>() : std::move(packets.front());
}

/*! A receiver's config for 127.0.0.1:port. */
recv::udp_config loopback_config(unsigned short port)
{
    return recv::udp_config().set_endpoints("127.0.0.1:" + std::to_string(port));
}

/*! Sends \p count heaps of \p size bytes (cnt 1, 2, ...) to \p endpoint from a kernel
 * UDP stream of 1472-byte packets, each heap as one message; returns the packets sent. */
std::uint64_t send_heaps(const std::string& endpoint, int count, std::size_t size)
{
    boost::asio::io_context io;
    send::udp_stream ss(io,
                        send::stream_config().set_max_packet_size(1472),
                        send::udp_config().set_endpoints(endpoint));
    for (int i = 0; i < count; i++)
        ss.send_heap(test_heap(i + 1, size).h);
    return ss.get_stats()[send_stat::packets];
}

/*! The next heap of \p rs, which must come within \p limit. */
recv::heap next_heap(recv::stream& rs, std::chrono::milliseconds limit = 1s)
{
    recv::heap h;
    EXPECT_EQ(rs.pop(h, limit), recv::stream::pop_result::heap);
    return h;
}

/*! A plain socket sending raw datagrams to 127.0.0.1:port. */
class raw_sender
{
public:
    explicit raw_sender(unsigned short port)
        : d_fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0))
    {
        d_dest.sin_family = AF_INET;
        d_dest.sin_port = htons(port);
        d_dest.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    void send(const std::vector<std::uint8_t>& datagram)
    {
        ASSERT_EQ(sendto(d_fd.get(),
                         datagram.data(),
                         datagram.size(),
                         0,
                         reinterpret_cast<sockaddr*>(&d_dest),
                         sizeof(d_dest)),
                  ssize_t(datagram.size()));
    }

private:
    file_descriptor d_fd;
    sockaddr_in d_dest{};
};

/*! Sets an environment variable for a scope (the reader reads GR_SPEAD_UDP_GRO when
 * it opens its sockets). */
class scoped_env
{
public:
    scoped_env(const char* name, const char* value) : d_name(name)
    {
        if (const char* old = std::getenv(name))
            d_old = old;
        setenv(name, value, 1);
    }
    ~scoped_env()
    {
        if (d_old)
            setenv(d_name, d_old->c_str(), 1);
        else
            unsetenv(d_name);
    }

private:
    const char* d_name;
    std::optional<std::string> d_old;
};

/*! While it lives, readers opened coalesce received datagrams (GRO) only if
 * \p coalescing (the default of a reader). */
class coalescing_setting
{
public:
    explicit coalescing_setting(bool coalescing)
    {
        if (!coalescing)
            d_off.emplace("GR_SPEAD_UDP_GRO", "0");
    }

private:
    std::optional<scoped_env> d_off;
};

/*! Polls \p done every millisecond for at most \p limit. */
bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s)
{
    const auto deadline = steady::now() + limit;
    while (!done()) {
        if (steady::now() > deadline)
            return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

/*! Packets decoded or reported dropped by the kernel; each dropped run counts as one
 * here (see spead_test::packets_reconcile()). */
std::uint64_t accounted_packets(const recv_stats& s)
{
    return s[recv_stat::packets] + s[recv_stat::packets_dropped_socket_overflow] +
           s[recv_stat::runs_dropped_socket_overflow] + s[recv_stat::datagrams_oversize];
}

/*! Checks a received heap against what test_heap(cnt, size) sent. */
void expect_payload(const recv::heap& h, std::size_t size)
{
    ASSERT_TRUE(h.is_complete());
    const recv::item* it = h.find(payload_id);
    ASSERT_NE(it, nullptr);
    ASSERT_EQ(it->length, size);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < size; i++)
        mismatches += it->data[i] != pattern_byte(h.cnt(), i);
    EXPECT_EQ(mismatches, 0u) << "heap " << h.cnt();
}

// ---- config ----------------------------------------------------------------------

using spead_test::expect_invalid;

TEST(RecvUdpConfig, DefaultsAreSpead2s)
{
    recv::udp_config c;
    EXPECT_TRUE(c.get_endpoints().empty());
    EXPECT_EQ(c.get_buffer_size(), 8u * 1024 * 1024);
    EXPECT_EQ(c.get_max_size(), 9200u);
    EXPECT_EQ(c.get_interface(), "");
}

TEST(RecvUdpConfig, ValidatesEveryParameter)
{
    recv::udp_config c;
    expect_invalid([&] { c.set_endpoints("239.1.2.3"); }, "endpoints");
    expect_invalid([&] { c.add_endpoint(boost::asio::ip::udp::endpoint()); },
                   "endpoints");
    expect_invalid([&] { c.set_max_size(63); }, "max_size");
    expect_invalid([&] { c.set_max_size(65508); }, "max_size");
    expect_invalid([&] { c.set_buffer_size(recv::udp_config::max_buffer_size + 1); },
                   "buffer_size");
    expect_invalid([&] { c.set_interface("nosuchif0"); }, "interface");
    c.set_endpoints("239.1.2.3+1:7148,:7149").set_interface("lo").set_buffer_size(0);
    EXPECT_EQ(c.get_endpoints().size(), 3u);
    EXPECT_EQ(c.get_interface(), "lo");
    EXPECT_EQ(c.get_buffer_size(), recv::udp_config::default_buffer_size);
}

TEST(SendUdpConfig, ValidatesEveryParameter)
{
    send::udp_config c;
    EXPECT_EQ(c.get_ttl(), 1);
    EXPECT_EQ(c.get_buffer_size(), 512u * 1024);
    expect_invalid([&] { c.set_endpoints(":7148"); }, "endpoints");
    expect_invalid([&] { c.set_ttl(-1); }, "ttl");
    expect_invalid([&] { c.set_ttl(256); }, "ttl");
    expect_invalid([&] { c.set_interface("nosuchif0"); }, "interface");
    expect_invalid([&] { c.set_buffer_size(send::udp_config::max_buffer_size + 1); },
                   "buffer_size");
    c.set_endpoints("239.1.2.3+3:7148")
        .set_ttl(0)
        .set_ttl(255)
        .set_interface("127.0.0.1");
    EXPECT_EQ(c.get_endpoints().size(), 4u);
    EXPECT_EQ(c.get_ttl(), 255);
}

TEST(UdpTransport, ReaderWithoutEndpointsIsRefused)
{
    recv::stream s;
    EXPECT_THROW(s.emplace_reader<recv::udp_reader>(recv::udp_config()),
                 std::invalid_argument);
}

TEST(UdpTransport, SenderWithoutEndpointsIsRefused)
{
    boost::asio::io_context io;
    EXPECT_THROW(send::udp_stream(io, send::stream_config(), send::udp_config()),
                 std::invalid_argument);
}

TEST(UdpTransport, BindingAnAddressOfAnotherHostFailsSayingSo)
{
    recv::stream s;
    spead_test::expect_error_containing<std::system_error>(
        [&] {
            s.emplace_reader<recv::udp_reader>(recv::udp_config().set_endpoints(
                "203.0.113.9:" + std::to_string(free_udp_port())));
        },
        "not an address of this host",
        "a foreign address");
}

TEST(UdpTransport, PacketSizeAboveThePathMtuIsRefused)
{
    // Needs an interface with an ordinary MTU (loopback's fits any UDP datagram).
    ifaddrs* list = nullptr;
    ASSERT_EQ(getifaddrs(&list), 0);
    std::string name;
    for (ifaddrs* p = list; p && name.empty(); p = p->ifa_next)
        if (p->ifa_addr && p->ifa_addr->sa_family == AF_INET &&
            std::string(p->ifa_name) != "lo" &&
            transport::interface_mtu(p->ifa_name) < 65535)
            name = p->ifa_name;
    freeifaddrs(list);
    if (name.empty())
        GTEST_SKIP() << "no interface with an MTU below 65535";
    const std::size_t mtu = std::size_t(transport::interface_mtu(name));

    boost::asio::io_context io;
    const auto udp =
        send::udp_config().set_endpoints("239.255.0.1:9").set_interface(name);
    const std::string message = spead_test::expect_error<std::invalid_argument>(
        [&] {
            send::udp_stream s(
                io, send::stream_config().set_max_packet_size(mtu - 28 + 1), udp);
        },
        "a packet size above the MTU " + std::to_string(mtu));
    EXPECT_EQ(message.rfind("max_packet_size:", 0), 0u) << message;
    EXPECT_NE(message.find("use at most " + std::to_string(mtu - 28)), std::string::npos)
        << message;
    EXPECT_NO_THROW(
        send::udp_stream(io, send::stream_config().set_max_packet_size(mtu - 28), udp));
}

// ---- moving heaps ------------------------------------------------------------------

/*! Sends \p heaps_per_substream heaps of \p size bytes to every endpoint and receives
 * them; checks the bytes of every heap received and that the counters reconcile. */
void loopback_round_trip(const std::string& endpoints,
                         std::size_t heaps_per_substream,
                         std::size_t size,
                         const send::stream_config& send_config,
                         std::size_t* delivered_out = nullptr)
{
    recv::stream rs(recv::stream_config().set_queue_heaps(64).set_max_heaps(8));
    auto& reader =
        rs.emplace_reader<recv::udp_reader>(recv::udp_config().set_endpoints(endpoints));
    boost::asio::io_context io;
    send::udp_stream ss(io, send_config, send::udp_config().set_endpoints(endpoints));
    const std::size_t substreams = ss.get_num_substreams();

    // Receive on this thread while another sends: heaps never wait for a consumer.
    std::map<std::uint64_t, std::size_t> delivered; // cnt -> substream sizes check
    std::atomic<std::size_t> failures{ 0 };         // written by the sender, read here
    std::thread sender([&] {
        std::vector<test_heap> heaps;
        heaps.reserve(heaps_per_substream * substreams);
        for (std::size_t i = 0; i < heaps_per_substream * substreams; i++)
            heaps.emplace_back(i + 1, size);
        for (std::size_t i = 0; i < heaps.size(); i++) {
            try {
                ss.send_heap(heaps[i].h, std::int64_t(i + 1), i % substreams);
            } catch (const std::exception&) {
                failures++;
            }
        }
    });

    const std::uint64_t heaps_sent = heaps_per_substream * substreams;
    std::uint64_t packets_sent = 0;
    const auto deadline = steady::now() + 20s;
    recv::heap h;
    bool sender_done = false;
    while (steady::now() < deadline) {
        if (rs.pop(h, 10ms) == recv::stream::pop_result::heap) {
            expect_payload(h, size);
            delivered[h.cnt()]++;
            continue;
        }
        if (!sender_done && ss.get_stats()[send_stat::heaps] + failures == heaps_sent) {
            sender.join();
            sender_done = true;
            packets_sent = ss.get_stats()[send_stat::packets];
        }
        if (sender_done && spead_test::packets_reconcile(packets_sent, rs.get_stats()))
            break;
    }
    if (!sender_done)
        sender.join();
    while (rs.try_pop(h)) {
        expect_payload(h, size);
        delivered[h.cnt()]++;
    }
    rs.stop();

    EXPECT_EQ(failures.load(), 0u);
    const send_stats sent = ss.get_stats();
    const recv_stats got = rs.get_stats();
    EXPECT_EQ(sent[send_stat::heaps], heaps_sent);
    // sent = delivered + counted drops, packet by packet
    EXPECT_TRUE(spead_test::packets_reconcile(sent[send_stat::packets], got));
    EXPECT_EQ(got[recv_stat::datagrams_oversize], 0u);
    EXPECT_EQ(got[recv_stat::heaps_dropped_queue_full], 0u);
    for (const auto& [cnt, times] : delivered)
        EXPECT_EQ(times, 1u) << "heap " << cnt << " delivered more than once";
    // A heap that did not arrive lost at least one packet, which the kernel counted:
    // with no drop, every heap arrived.
    EXPECT_LE(heaps_sent - delivered.size(),
              got[recv_stat::packets_dropped_socket_overflow] +
                  got[recv_stat::runs_dropped_socket_overflow]);
    EXPECT_EQ(got[recv_stat::heaps], delivered.size());
    if (delivered_out)
        *delivered_out = delivered.size();

    // Each socket is bound as documented: a lone endpoint to its address, else 0.0.0.0.
    EXPECT_FALSE(reader.get_bound_endpoints().empty());
}

TEST(UdpLoopback, HeapsReachSeveralEndpointsAndARange)
{
    const unsigned short p1 = free_udp_port();
    const unsigned short p2 = free_udp_port();
    // 127.0.0.0/8 is all local: a range of four loopback addresses on one port.
    const std::string endpoints =
        "127.0.0.1:" + std::to_string(p1) + ",127.0.0.1+3:" + std::to_string(p2);
    loopback_round_trip(endpoints, 10, 20000, send::stream_config().set_rate(200e6));
}

TEST(UdpLoopback, SocketsAreBoundPerPort)
{
    const unsigned short p1 = free_udp_port();
    const unsigned short p2 = free_udp_port();
    recv::stream rs;
    auto& reader = rs.emplace_reader<recv::udp_reader>(recv::udp_config().set_endpoints(
        "127.0.0.1:" + std::to_string(p1) + ",127.0.0.1+3:" + std::to_string(p2)));
    auto bound = reader.get_bound_endpoints();
    std::sort(bound.begin(), bound.end(), [](const auto& a, const auto& b) {
        return a.port() == b.port() ? a.address() < b.address() : a.port() < b.port();
    });
    ASSERT_EQ(bound.size(), 2u);
    for (const auto& ep : bound) {
        if (ep.port() == p1)
            EXPECT_EQ(ep.address().to_string(), "127.0.0.1");
        else
            EXPECT_EQ(ep.address().to_string(), "0.0.0.0");
    }
}

TEST(UdpLoopback, FourMiBHeapsArriveWhole)
{
    const std::string endpoint = "127.0.0.1:" + std::to_string(free_udp_port());
    std::size_t delivered = 0;
    // 100 Mb/s: a 4 MiB socket buffer (the usual rmem_max cap) holds a whole heap,
    // and a reader slowed by ThreadSanitizer still drains it between heaps (at 400 Mb/s
    // the CI's TSan run lost a packet of every heap). Six heaps take about 2 s.
    loopback_round_trip(endpoint,
                        6,
                        4 * 1024 * 1024,
                        send::stream_config().set_max_packet_size(8972).set_rate(100e6),
                        &delivered);
    EXPECT_GT(delivered, 0u);
}

TEST(UdpLoopback, UnlimitedRateStillReconciles)
{
    const std::string endpoint = "127.0.0.1:" + std::to_string(free_udp_port());
    loopback_round_trip(
        endpoint, 40, 200000, send::stream_config().set_max_packet_size(8972));
}

TEST(UdpLoopback, EveryDatagramIsOnePacketAsThePacketiserCutIt)
{
    // Runs of equal-sized packets may leave as one segmentation-offload (GSO) message;
    // a plain socket must still receive the packetiser's packets, one per datagram, in
    // order, the short last packet of each heap included, from two substreams.
    const unsigned short p1 = free_udp_port();
    const unsigned short p2 = free_udp_port();
    std::vector<file_descriptor> rx;
    for (unsigned short port : { p1, p2 }) {
        rx.emplace_back(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        const int buffer = 4 << 20;
        setsockopt(rx.back().get(), SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_EQ(bind(rx.back().get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
                  0);
    }
    boost::asio::io_context io;
    send::udp_stream ss(
        io,
        send::stream_config().set_max_packet_size(1472),
        send::udp_config().set_endpoints("127.0.0.1:" + std::to_string(p1) +
                                         ",127.0.0.1:" + std::to_string(p2)));
    std::vector<test_heap> heaps;
    heaps.emplace_back(1, 100001); // 70 packets: more than one GSO message
    heaps.emplace_back(2, 3000);
    heaps.emplace_back(3, 100);
    for (std::size_t i = 0; i < heaps.size(); i++)
        ss.send_heap(heaps[i].h, std::int64_t(i + 1), i % 2);

    std::vector<std::uint8_t> datagram(65536);
    std::vector<std::uint8_t> header(1472);
    std::vector<send::packet_piece> pieces;
    for (std::size_t i = 0; i < heaps.size(); i++) {
        send::packet_generator gen(heaps[i].h, i + 1, 1472);
        std::size_t index = 0;
        while (gen.has_next()) {
            pieces.clear();
            gen.next(header.data(), pieces);
            std::vector<std::uint8_t> expected;
            for (const auto& p : pieces)
                expected.insert(expected.end(), p.data, p.data + p.length);
            pollfd pfd{ rx[i % 2].get(), POLLIN, 0 };
            ASSERT_EQ(poll(&pfd, 1, 5000), 1) << "heap " << i + 1 << " packet " << index;
            const ssize_t got =
                ::recv(rx[i % 2].get(), datagram.data(), datagram.size(), 0);
            ASSERT_EQ(got, ssize_t(expected.size()))
                << "heap " << i + 1 << " packet " << index;
            EXPECT_TRUE(std::equal(expected.begin(), expected.end(), datagram.begin()))
                << "heap " << i + 1 << " packet " << index;
            index++;
        }
    }
    for (const auto& fd : rx)
        EXPECT_LT(::recv(fd.get(), datagram.data(), datagram.size(), MSG_DONTWAIT), 0)
            << "a datagram more than the packetiser cut";
}

TEST(UdpLoopback, StopHeapEndsTheReceivingStream)
{
    const std::string endpoint = "127.0.0.1:" + std::to_string(free_udp_port());
    recv::stream rs;
    rs.emplace_reader<recv::udp_reader>(recv::udp_config().set_endpoints(endpoint));
    boost::asio::io_context io;
    send::udp_stream ss(
        io, send::stream_config(), send::udp_config().set_endpoints(endpoint));
    test_heap data(1, 3000);
    send::heap stop;
    stop.add_end();
    ss.send_heap(data.h);
    ss.send_heap(stop);

    std::vector<std::uint64_t> cnts;
    recv::heap h;
    recv::stream::pop_result r = recv::stream::pop_result::timeout;
    for (int i = 0; i < 500 && r != recv::stream::pop_result::stopped; i++) {
        r = rs.pop(h, 20ms);
        if (r == recv::stream::pop_result::heap)
            cnts.push_back(h.cnt());
    }
    EXPECT_EQ(r, recv::stream::pop_result::stopped);
    ASSERT_FALSE(cnts.empty());
    EXPECT_EQ(cnts.front(), 1u);
    EXPECT_EQ(rs.get_stats()[recv_stat::stop_heaps], 1u);
}

// ---- counted losses ------------------------------------------------------------------

TEST(UdpReader, OversizeDatagramsAreCounted)
{
    const unsigned short port = free_udp_port();
    recv::stream rs;
    rs.emplace_reader<recv::udp_reader>(loopback_config(port).set_max_size(1000));
    raw_sender tx(port);
    tx.send(std::vector<std::uint8_t>(1500, 0x53));
    tx.send(single_packet_heap(7, 100));
    ASSERT_TRUE(wait_for([&] { return accounted_packets(rs.get_stats()) == 2; }));
    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::datagrams_oversize], 1u);
    EXPECT_EQ(stats[recv_stat::packets], 1u);
    EXPECT_EQ(next_heap(rs).cnt(), 7u);
}

/*! Sends \p datagrams to 127.0.0.1:port as one segmentation-offload message
 * (UDP_SEGMENT): all but the last of \p segment bytes, the last at most that. */
void send_as_one_run(unsigned short port,
                     const std::vector<std::vector<std::uint8_t>>& datagrams,
                     int segment)
{
    file_descriptor fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ASSERT_EQ(setsockopt(fd.get(), SOL_UDP, UDP_SEGMENT, &segment, sizeof(segment)), 0)
        << std::strerror(errno);
    std::vector<std::uint8_t> message;
    for (const auto& d : datagrams)
        message.insert(message.end(), d.begin(), d.end());
    sockaddr_in dest{};
    dest.sin_family = AF_INET;
    dest.sin_port = htons(port);
    dest.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(sendto(fd.get(),
                     message.data(),
                     message.size(),
                     0,
                     reinterpret_cast<sockaddr*>(&dest),
                     sizeof(dest)),
              ssize_t(message.size()))
        << std::strerror(errno);
}

/*! A run of three 1000-byte datagrams and a one-packet heap, into a reader whose
 * max_size is 800; returns its stats once all four are accounted for. */
recv_stats oversize_run_and_a_heap(bool coalescing)
{
    const coalescing_setting gro(coalescing);
    const unsigned short port = free_udp_port();
    recv::stream rs;
    rs.emplace_reader<recv::udp_reader>(loopback_config(port).set_max_size(800));
    const auto heap = single_packet_heap(7, 100);
    send_as_one_run(port,
                    { std::vector<std::uint8_t>(1000, 0x53),
                      std::vector<std::uint8_t>(1000, 0x54),
                      std::vector<std::uint8_t>(1000, 0x55),
                      heap },
                    1000);
    EXPECT_TRUE(wait_for([&] { return accounted_packets(rs.get_stats()) == 4; }));
    const recv::heap h = next_heap(rs);
    EXPECT_EQ(h.cnt(), 7u);
    expect_payload(h, 100);
    return rs.get_stats();
}

TEST(UdpReader, ACoalescedRunIsSplitIntoItsDatagramsEachCheckedForSize)
{
    const recv_stats stats = oversize_run_and_a_heap(true);
    EXPECT_EQ(stats[recv_stat::datagrams_oversize], 3u);
    EXPECT_EQ(stats[recv_stat::packets], 1u);
    EXPECT_EQ(stats[recv_stat::heaps], 1u);
    EXPECT_EQ(stats[recv_stat::max_batch], 1u) << "the oversize ones reached the stream";
}

TEST(UdpReader, WithoutCoalescingTheSameRunCountsTheSame)
{
    const recv_stats stats = oversize_run_and_a_heap(false);
    EXPECT_EQ(stats[recv_stat::datagrams_oversize], 3u);
    EXPECT_EQ(stats[recv_stat::packets], 1u);
}

TEST(UdpReader, RunsOfDatagramsArriveCoalescedUnlessTurnedOff)
{
    // A heap of 42 packets leaves as one message; a coalescing socket takes it in one
    // piece and hands the stream all 42 at once, more than a batch of 64 messages could
    // hold were each one datagram. Without coalescing the same heap comes one by one.
    for (const bool coalescing : { true, false }) {
        const coalescing_setting gro(coalescing);
        const unsigned short port = free_udp_port();
        const std::string endpoint = "127.0.0.1:" + std::to_string(port);
        recv::stream rs(recv::stream_config().set_max_heaps(8));
        auto reader = std::make_unique<recv::udp_reader>(
            rs, recv::udp_config().set_endpoints(endpoint));
        const std::uint64_t sent = send_heaps(endpoint, 3, 60000);
        rs.add_reader(std::move(reader)); // all three are queued: one batch
        recv::heap h;
        for (int i = 0; i < 3; i++) {
            ASSERT_EQ(rs.pop(h, 5s), recv::stream::pop_result::heap);
            expect_payload(h, 60000);
        }
        const recv_stats stats = rs.get_stats();
        EXPECT_EQ(stats[recv_stat::packets], sent);
        if (coalescing)
            EXPECT_EQ(stats[recv_stat::max_batch], stats[recv_stat::packets]);
        else
            EXPECT_LE(stats[recv_stat::max_batch], 64u);
    }
}

TEST(UdpReader, JunkIsCountedAndSurvived)
{
    const unsigned short port = free_udp_port();
    recv::stream rs;
    rs.emplace_reader<recv::udp_reader>(loopback_config(port));
    raw_sender tx(port);
    tx.send({});                                  // empty datagram
    tx.send({ 0x53, 0x04, 0x03, 0x05 });          // truncated header
    tx.send(std::vector<std::uint8_t>(64, 0xff)); // wrong magic
    tx.send(single_packet_heap(3, 100));
    EXPECT_EQ(next_heap(rs, 5s).cnt(), 3u);
    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::packets], 1u);
    EXPECT_EQ(stats[recv_stat::packets_truncated] + stats[recv_stat::packets_bad_header] +
                  stats[recv_stat::packets_size_mismatch],
              3u);
}

/*! Fills a 4 KiB socket buffer with 200 one-datagram heaps before the reader starts, then
 * sends 5 more, which carry the drop counter (SO_RXQ_OVFL) with them. */
recv_stats drops_of_single_datagrams(bool coalescing)
{
    const coalescing_setting gro(coalescing);
    const unsigned short port = free_udp_port();
    recv::stream rs(recv::stream_config().set_queue_heaps(512));
    auto reader = std::make_unique<recv::udp_reader>(
        rs, loopback_config(port).set_buffer_size(4096));
    raw_sender tx(port);
    const int before = 200;
    for (int i = 0; i < before; i++)
        tx.send(single_packet_heap(i + 1, 1000));
    rs.add_reader(std::move(reader));
    for (int i = 0; i < 5; i++)
        tx.send(single_packet_heap(before + i + 1, 1000));

    const auto accounted = [](const recv_stats& st) {
        return st[recv_stat::packets] + st[recv_stat::packets_dropped_socket_overflow] +
               st[recv_stat::runs_dropped_socket_overflow];
    };
    EXPECT_TRUE(wait_for([&] { return accounted(rs.get_stats()) == before + 5; }));
    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(accounted(stats), std::uint64_t(before + 5));
    EXPECT_EQ(stats[recv_stat::heaps], stats[recv_stat::packets]);
    return stats;
}

TEST(UdpReader, KernelDropsAreCountedInSocketOverflow)
{
    // Without coalescing the kernel counts each datagram it drops.
    const recv_stats stats = drops_of_single_datagrams(false);
    EXPECT_GT(stats[recv_stat::packets_dropped_socket_overflow], 0u);
    EXPECT_EQ(stats[recv_stat::runs_dropped_socket_overflow], 0u);
}

TEST(UdpReader, KernelDropsOfSingleDatagramsOnACoalescingSocketAreRunsOfOne)
{
    const recv_stats stats = drops_of_single_datagrams(true);
    EXPECT_GT(stats[recv_stat::runs_dropped_socket_overflow], 0u);
    EXPECT_EQ(stats[recv_stat::packets_dropped_socket_overflow], 0u);
}

TEST(UdpReader, ACoalescedRunTheKernelDropsIsCountedOnceAndWhole)
{
    // A sender's segmentation-offload message reaches a coalescing (UDP_GRO) socket
    // whole: when the buffer is full the kernel drops the run at once. Each datagram
    // in it must still be counted, so that sent = received + dropped.
    const unsigned short port = free_udp_port();
    const std::string endpoint = "127.0.0.1:" + std::to_string(port);
    recv::stream rs(recv::stream_config().set_queue_heaps(512).set_max_heaps(64));
    auto reader = std::make_unique<recv::udp_reader>(
        rs, recv::udp_config().set_endpoints(endpoint).set_buffer_size(4096));
    const int heaps = 40;
    const std::uint64_t sent = send_heaps(endpoint, heaps, 60000); // 42 packets a heap
    rs.add_reader(std::move(reader));
    ASSERT_EQ(sent % heaps, 0u);
    const std::uint64_t run = sent / heaps;
    ASSERT_LE(run, 64u) << "a heap must leave as one message";

    // Each heap left as one message; the kernel drops it whole and counts it once.
    const auto accounted = [&](const recv_stats& st) {
        return st[recv_stat::packets] + st[recv_stat::packets_dropped_socket_overflow] +
               run * st[recv_stat::runs_dropped_socket_overflow];
    };
    EXPECT_TRUE(wait_for([&] { return accounted(rs.get_stats()) >= sent; }));
    const recv_stats stats = rs.get_stats();
    EXPECT_GT(stats[recv_stat::runs_dropped_socket_overflow], 0u);
    EXPECT_EQ(stats[recv_stat::packets_dropped_socket_overflow], 0u);
    EXPECT_EQ(accounted(stats), sent)
        << stats[recv_stat::packets] << " packets, "
        << stats[recv_stat::runs_dropped_socket_overflow] << " runs dropped";
    EXPECT_EQ(stats[recv_stat::packets] % run, 0u) << "runs arrive whole or not at all";
}

TEST(UdpReader, DatagramsQueuedAtStopAreCountedNotLost)
{
    const unsigned short port = free_udp_port();
    recv::stream rs(recv::stream_config().set_queue_heaps(64));
    auto reader = std::make_unique<recv::udp_reader>(rs, loopback_config(port));
    raw_sender tx(port);
    for (int i = 0; i < 20; i++)
        tx.send(single_packet_heap(i + 1, 500));
    rs.add_reader(std::move(reader));
    rs.stop(); // whatever the thread had not read yet is drained on its way out
    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::packets] + stats[recv_stat::packets_after_stop] +
                  stats[recv_stat::packets_dropped_socket_overflow],
              20u);
}

TEST(UdpReader, CappedBufferIsReadBackAndWarnedAbout)
{
    std::size_t rmem_max = 0;
    std::ifstream("/proc/sys/net/core/rmem_max") >> rmem_max;
    if (rmem_max == 0 || rmem_max * 2 > recv::udp_config::max_buffer_size)
        GTEST_SKIP() << "net.core.rmem_max unreadable or too large to exceed";
    const auto log = capture_sink::instance();
    const std::size_t requested = rmem_max * 2;

    recv::stream rs;
    auto& reader = rs.emplace_reader<recv::udp_reader>(
        recv::udp_config()
            .set_endpoints("127.0.0.1:" + std::to_string(free_udp_port()))
            .set_buffer_size(requested));
    EXPECT_EQ(reader.get_granted_buffer_size(), rmem_max);
    const std::string text = log->text();
    EXPECT_NE(text.find("net.core.rmem_max"), std::string::npos) << text;
    EXPECT_NE(text.find("sysctl -w net.core.rmem_max=" + std::to_string(requested)),
              std::string::npos)
        << text;
}

TEST(UdpReader, BufferWithinTheCapIsGrantedInFull)
{
    recv::stream rs;
    auto& reader = rs.emplace_reader<recv::udp_reader>(
        recv::udp_config()
            .set_endpoints("127.0.0.1:" + std::to_string(free_udp_port()))
            .set_buffer_size(65536));
    EXPECT_EQ(reader.get_granted_buffer_size(), 65536u);
}

// ---- lifecycle
// -------------------------------------------------------------------------

TEST(UdpReader, StopIsPromptAndTheSocketIsReleased)
{
    const unsigned short port = free_udp_port();
    const std::string endpoint = "127.0.0.1:" + std::to_string(port);
    for (int cycle = 0; cycle < 3; cycle++) {
        auto rs = std::make_unique<recv::stream>();
        rs->emplace_reader<recv::udp_reader>(recv::udp_config().set_endpoints(endpoint));
        std::this_thread::sleep_for(20ms); // let the thread settle into poll()
        const auto start = steady::now();
        rs->stop();
        EXPECT_LT(steady::now() - start, 1s);
        rs.reset(); // start -> stop -> start: the port must be free again
    }
    file_descriptor fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    const sockaddr_in addr = transport::to_sockaddr(
        boost::asio::ip::udp::endpoint(boost::asio::ip::address_v4::loopback(), port));
    EXPECT_EQ(bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
}

TEST(UdpReader, SecondReaderOnABusyUnicastPortFailsSayingWhy)
{
    const std::string endpoint = "127.0.0.1:" + std::to_string(free_udp_port());
    recv::stream a;
    a.emplace_reader<recv::udp_reader>(recv::udp_config().set_endpoints(endpoint));
    recv::stream b;
    spead_test::expect_error_containing<std::system_error>(
        [&] {
            b.emplace_reader<recv::udp_reader>(
                recv::udp_config().set_endpoints(endpoint));
        },
        "another receiver",
        "a busy port");
}

} // namespace

namespace {

/*!
 * Runs \p body on a thread moved into a new network namespace whose loopback is up
 * and multicast-capable, so multicast can be tested without touching the host.
 * Sockets made on that thread stay in the namespace when other threads use them.
 * \return false if the namespace could not be made (no CAP_SYS_ADMIN)
 */
bool in_private_network(const std::function<void()>& body)
{
    bool ok = false;
    std::thread t([&] {
        if (unshare(CLONE_NEWNET) != 0)
            return;
        file_descriptor fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        ifreq req{};
        std::strncpy(req.ifr_name, "lo", IFNAMSIZ - 1);
        if (ioctl(fd.get(), SIOCGIFFLAGS, &req) != 0)
            return;
        req.ifr_flags |= IFF_UP | IFF_MULTICAST;
        if (ioctl(fd.get(), SIOCSIFFLAGS, &req) != 0)
            return;
        ok = true;
        body();
    });
    t.join();
    return ok;
}

TEST(UdpMulticast, GroupsAndARangeJoinedOnANamedInterface)
{
    std::unique_ptr<recv::stream> rs;
    recv::udp_reader* reader = nullptr;
    std::unique_ptr<send::udp_stream> ss;
    boost::asio::io_context io;
    const std::string endpoints = "239.1.2.3:7148,239.1.2.10+2:7149";
    const bool made = in_private_network([&] {
        rs = std::make_unique<recv::stream>(recv::stream_config().set_queue_heaps(64));
        reader = &rs->emplace_reader<recv::udp_reader>(
            recv::udp_config().set_endpoints(endpoints).set_interface("lo"));
        ss = std::make_unique<send::udp_stream>(
            io,
            send::stream_config(),
            send::udp_config().set_endpoints(endpoints).set_interface("127.0.0.1"));
    });
    if (!made)
        GTEST_SKIP() << "cannot create a network namespace here";
    auto bound = reader->get_bound_endpoints();
    ASSERT_EQ(bound.size(), 2u);

    const std::size_t substreams = ss->get_num_substreams();
    ASSERT_EQ(substreams, 4u);
    std::vector<test_heap> heaps;
    for (std::size_t i = 0; i < 3 * substreams; i++)
        heaps.emplace_back(i + 1, 3000);
    for (std::size_t i = 0; i < heaps.size(); i++)
        ss->send_heap(heaps[i].h, std::int64_t(i + 1), i % substreams);

    std::size_t delivered = 0;
    recv::heap h;
    for (int i = 0; i < 200 && delivered < heaps.size(); i++)
        if (rs->pop(h, 20ms) == recv::stream::pop_result::heap) {
            expect_payload(h, 3000);
            delivered++;
        }
    rs->stop();
    const recv_stats got = rs->get_stats();
    EXPECT_TRUE(spead_test::packets_reconcile(ss->get_stats()[send_stat::packets], got));
    EXPECT_EQ(got[recv_stat::packets_duplicate], 0u);
    // A heap that did not arrive lost at least one packet, which the kernel counted.
    EXPECT_LE(heaps.size() - delivered,
              got[recv_stat::packets_dropped_socket_overflow] +
                  got[recv_stat::runs_dropped_socket_overflow]);
    ss.reset();
    rs.reset();
}

TEST(UdpMulticast, GroupsNotJoinedStayOut)
{
    // A 0.0.0.0-bound socket on the port would otherwise receive any group joined on
    // the host: IP_MULTICAST_ALL is off.
    std::unique_ptr<recv::stream> rs;
    std::unique_ptr<send::udp_stream> ss;
    boost::asio::io_context io;
    const bool made = in_private_network([&] {
        rs = std::make_unique<recv::stream>();
        rs->emplace_reader<recv::udp_reader>(
            recv::udp_config()
                .set_endpoints("239.1.2.3:7150,239.1.2.4:7150")
                .set_interface("lo"));
        // Another receiver on the host joins 239.1.2.5, on the same port.
        rs->emplace_reader<recv::udp_reader>(
            recv::udp_config()
                .set_endpoints("239.1.2.5:7150,239.1.2.6:7150")
                .set_interface("lo"));
        ss = std::make_unique<send::udp_stream>(
            io,
            send::stream_config(),
            send::udp_config()
                .set_endpoints("239.1.2.3:7150,239.1.2.5:7150")
                .set_interface("lo"));
    });
    if (!made)
        GTEST_SKIP() << "cannot create a network namespace here";
    test_heap a(1, 100), b(2, 100);
    ss->send_heap(a.h, 1, 0);
    ss->send_heap(b.h, 2, 1);
    // Both readers feed one stream: each packet must arrive exactly once.
    ASSERT_TRUE(wait_for([&] { return rs->get_stats()[recv_stat::heaps] >= 2; }, 5s));
    std::this_thread::sleep_for(50ms); // a duplicate would arrive by now
    const recv_stats got = rs->get_stats();
    EXPECT_EQ(got[recv_stat::packets], 2u);
    EXPECT_EQ(got[recv_stat::packets_duplicate] + got[recv_stat::packets_late], 0u);
    ss.reset();
    rs.reset();
}

} // namespace

namespace {

TEST(UdpMulticast, TtlZeroKeepsMulticastOnThisHost)
{
    std::unique_ptr<recv::stream> rs;
    std::unique_ptr<send::udp_stream> ss;
    boost::asio::io_context io;
    const bool made = in_private_network([&] {
        rs = std::make_unique<recv::stream>(recv::stream_config().set_queue_heaps(8));
        rs->emplace_reader<recv::udp_reader>(
            recv::udp_config().set_endpoints("239.1.2.3:7148").set_interface("lo"));
        ss = std::make_unique<send::udp_stream>(io,
                                                send::stream_config(),
                                                send::udp_config()
                                                    .set_endpoints("239.1.2.3:7148")
                                                    .set_interface("127.0.0.1")
                                                    .set_ttl(0));
    });
    if (!made)
        GTEST_SKIP() << "cannot create a network namespace here";
    test_heap heap(1, 3000);
    ss->send_heap(heap.h, 1);
    recv::heap h;
    ASSERT_EQ(rs->pop(h, 2s), recv::stream::pop_result::heap);
    expect_payload(h, 3000);
    ss.reset();
    rs.reset();
}

TEST(UdpTransport, TtlZeroToAUnicastDestinationIsRefusedNamingTtl)
{
    boost::asio::io_context io;
    try {
        send::udp_stream(
            io,
            send::stream_config(),
            send::udp_config().set_endpoints("127.0.0.1:7148,239.1.2.3:7148").set_ttl(0));
        ADD_FAILURE() << "ttl 0 accepted for a unicast destination";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("ttl: 0 keeps multicast on this host, but "
                                              "127.0.0.1 is a unicast destination",
                                              0),
                  0u)
            << e.what();
    }
}

TEST(UdpMulticast, MoreGroupsThanASocketMayJoinNamesTheSysctlAndItsValue)
{
    std::string error, limit;
    const bool made = in_private_network([&] {
        std::ifstream("/proc/sys/net/ipv4/igmp_max_memberships") >> limit;
        recv::stream s;
        try {
            s.emplace_reader<recv::udp_reader>(recv::udp_config()
                                                   .set_endpoints("239.1.2.3+300:7148")
                                                   .set_interface("lo"));
        } catch (const std::system_error& e) {
            error = e.what();
        }
    });
    if (!made)
        GTEST_SKIP() << "cannot create a network namespace here";
    ASSERT_FALSE(limit.empty());
    ASSERT_LT(std::stoul(limit), 301u) << "the limit here allows all 301 groups";
    EXPECT_NE(error.find("this socket has joined " + limit +
                         " groups; net.ipv4.igmp_max_memberships, the most one "
                         "socket may join, is " +
                         limit),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("sysctl -w net.ipv4.igmp_max_memberships="), std::string::npos)
        << error;
}

} // namespace
