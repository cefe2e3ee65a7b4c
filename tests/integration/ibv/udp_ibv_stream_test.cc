/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::udp_ibv_stream over the emulated NIC, across a veth pair: host 1 sends through
// verbs, host 2 receives with the kernel (recv::udp_reader, which only sees datagrams
// whose IPv4 header checksum is right) or sniffs the raw frames. One behaviour per
// test; ctest runs each in a fresh two-host topology (see CMakeLists.txt).

#include "ibv_test_support.h"
#include "log_capture.h"
#include "reconcile.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

using spead_test::capture_sink;

namespace {

using namespace gr::spead;
using namespace ibv_test;
using namespace std::chrono_literals;
using boost::asio::ip::make_address_v4;
using boost::asio::ip::udp;

constexpr std::size_t jumbo_packet = 8972;    // a 9000-byte MTU's UDP payload
constexpr unsigned short port = default_port; // sender_config()'s
constexpr const char* multicast_group = "239.10.0.1";

/*! A heap of one item whose bytes live wherever the caller says. */
send::heap payload_heap(const std::uint8_t* data, std::size_t size)
{
    send::heap h;
    h.add_item(payload_id, data, size, false);
    return h;
}

/*! Heaps arriving in host 2 through the kernel: recv::udp_reader on eth0. */
class kernel_receiver
{
public:
    explicit kernel_receiver(const std::string& endpoints)
    {
        in_host there(2);
        recv::stream_config config;
        config.set_max_heaps(8).set_queue_heaps(4096);
        d_stream = std::make_unique<recv::stream>(config);
        recv::udp_config udp;
        udp.set_endpoints(endpoints).set_interface(host(2).netdev);
        d_reader = &d_stream->emplace_reader<recv::udp_reader>(udp);
    }
    ~kernel_receiver() { d_stream->stop(); }

    /*! Waits until \p n heaps have arrived in all, at most \p limit for each; false
     * if one did not. */
    bool wait_until_received(std::size_t n, std::chrono::milliseconds limit = 5000ms)
    {
        while (d_arrived.size() < n) {
            recv::heap h;
            if (d_stream->pop(h, limit) != recv::stream::pop_result::heap)
                return false;
            d_arrived.push_back(std::move(h));
        }
        return true;
    }

    /*! The first \p n heaps not taken yet, fewer if they do not arrive in time. */
    std::vector<recv::heap> take(std::size_t n, std::chrono::milliseconds limit = 5000ms)
    {
        wait_until_received(n, limit);
        const std::size_t count = std::min(n, d_arrived.size());
        std::vector<recv::heap> heaps(std::make_move_iterator(d_arrived.begin()),
                                      std::make_move_iterator(d_arrived.begin() + count));
        d_arrived.erase(d_arrived.begin(), d_arrived.begin() + count);
        return heaps;
    }
    recv_stats stats() const { return d_stream->get_stats(); }

    /*! Heaps of \p heap_size bytes that may be on their way at once without
     * overflowing the socket: the kernel charges a datagram the true size of its
     * buffer (close to twice the payload for a jumbo frame) against twice the granted
     * buffer, so half of that is kept free for the reader's delays. With Debian's
     * default net.core.rmem_max (212992) that is one 100 kB heap. */
    std::size_t heaps_that_fit(std::size_t heap_size) const
    {
        return std::max<std::size_t>(
            1, d_reader->get_granted_buffer_size() / (2 * heap_size));
    }
    std::size_t socket_buffer() const { return d_reader->get_granted_buffer_size(); }

private:
    std::unique_ptr<recv::stream> d_stream;
    recv::udp_reader* d_reader;
    std::vector<recv::heap> d_arrived;
};

/*! net.core.rmem_max, bytes (0 if unreadable). */
std::size_t rmem_max()
{
    std::ifstream in("/proc/sys/net/core/rmem_max");
    std::size_t value = 0;
    in >> value;
    return value;
}

/*!
 * Sends \p heaps heaps of \p heap_size bytes with send(i), i = 0, 1, ..., never more
 * of them ahead of \p receiver than its socket buffer holds: the test asserts lossless
 * UDP, and on a loaded machine the kernel receiver's thread may not run for a while.
 * The limit net.core.rmem_max is left as it is (it is global, and tests and other
 * programs run in parallel); the test output says how far ahead the sender may go.
 * Stops early if a heap does not arrive (the caller's assertions then say so).
 */
void send_paced_by_receiver(kernel_receiver& receiver,
                            std::size_t heaps,
                            std::size_t heap_size,
                            const std::function<void(std::size_t)>& send)
{
    const std::size_t ahead = receiver.heaps_that_fit(heap_size);
    std::cout << "net.core.rmem_max is " << rmem_max() << " (not changed): the kernel "
              << "receiver's socket buffer is " << receiver.socket_buffer()
              << " bytes, so the sender stays at most " << ahead << " heap(s) of "
              << heap_size << " bytes ahead of it\n";
    for (std::size_t i = 0; i < heaps; i++) {
        if (i >= ahead && !receiver.wait_until_received(i + 1 - ahead))
            return;
        send(i);
    }
}

/*! Raw frames arriving at host 2's eth0, as the wire carries them. */
class frame_sniffer
{
public:
    frame_sniffer()
    {
        in_host there(2);
        d_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_IP));
        if (d_fd < 0)
            throw std::system_error(errno, std::generic_category(), "AF_PACKET socket");
        sockaddr_ll address{};
        address.sll_family = AF_PACKET;
        address.sll_protocol = htons(ETH_P_IP);
        address.sll_ifindex = int(if_nametoindex(host(2).netdev.c_str()));
        if (bind(d_fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
            throw std::system_error(errno, std::generic_category(), "bind AF_PACKET");
        timeval tv{ 2, 0 };
        setsockopt(d_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    }
    ~frame_sniffer() { close(d_fd); }

    /*! The next UDP frame for \p dst_port (others skipped), or empty after 2 s. */
    std::vector<std::uint8_t> next_udp_frame(unsigned short dst_port)
    {
        std::vector<std::uint8_t> frame(65536);
        for (int i = 0; i < 1000; i++) {
            const ssize_t n = ::recv(d_fd, frame.data(), frame.size(), 0);
            if (n <= 0)
                return {};
            if (n < 42 || frame[23] != IPPROTO_UDP ||
                (frame[36] << 8 | frame[37]) != dst_port)
                continue;
            frame.resize(std::size_t(n));
            return frame;
        }
        return {};
    }

private:
    int d_fd = -1;
};

std::uint16_t be16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }

/*! RFC 1071 sum over \p n bytes, plus \p initial. */
std::uint32_t ones_sum(const std::uint8_t* p, std::size_t n, std::uint32_t initial = 0)
{
    std::uint32_t sum = initial;
    for (std::size_t i = 0; i + 1 < n; i += 2)
        sum += be16(p + i);
    if (n % 2)
        sum += std::uint32_t(p[n - 1]) << 8;
    return sum;
}
std::uint16_t fold(std::uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return std::uint16_t(sum);
}

std::string mac_text(const std::uint8_t* p)
{
    char text[18];
    std::snprintf(text,
                  sizeof(text),
                  "%02x:%02x:%02x:%02x:%02x:%02x",
                  p[0],
                  p[1],
                  p[2],
                  p[3],
                  p[4],
                  p[5]);
    return text;
}

send::stream_config jumbo_stream()
{
    // Paced at 1.6 Gb/s: the kernel receiver's socket buffer (capped by rmem_max, 4 MiB
    // on a stock kernel) cannot hold an unpaced burst of several MB while other tests
    // load both cores, and these tests check bits, not speed.
    send::stream_config config;
    config.set_max_packet_size(jumbo_packet).set_max_heaps(8).set_rate(200e6);
    return config;
}

/*! Runs an io_context on a thread for the async handlers. */
struct io_thread {
    boost::asio::io_context io;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work =
        boost::asio::make_work_guard(io);
    std::thread thread{ [this] { io.run(); } };
    ~io_thread()
    {
        work.reset();
        thread.join();
    }
};

// ---- heaps to a kernel receiver ---------------------------------------------------

struct traffic_case {
    const char* name;
    bool multicast;
    int comp_vector;
};

// gtest would otherwise print the struct's bytes, padding included.
void PrintTo(const traffic_case& c, std::ostream* os) { *os << c.name; }

class SendToKernel : public ::testing::TestWithParam<traffic_case>
{
};

TEST_P(SendToKernel, HeapsArriveBitExact)
{
    REQUIRE_TOPOLOGY();
    const traffic_case c = GetParam();
    const std::string destination = c.multicast ? multicast_group : host(2).ip;
    kernel_receiver receiver(destination + ":" + std::to_string(port));

    constexpr std::size_t heaps = 64;
    constexpr std::size_t heap_size = 100000; // 12 packets, the last one short
    std::vector<std::vector<std::uint8_t>> payloads(heaps);
    for (std::size_t i = 0; i < heaps; i++) {
        payloads[i].resize(heap_size);
        fill_pattern(payloads[i].data(), heap_size, i + 1);
    }
    boost::asio::io_context io;
    send::udp_ibv_stream sender(
        io, jumbo_stream(), sender_config(destination, c.comp_vector));
    send_paced_by_receiver(receiver, heaps, heap_size, [&](std::size_t i) {
        sender.send_heap(payload_heap(payloads[i].data(), heap_size),
                         std::int64_t(i + 1));
    });

    const auto received = receiver.take(heaps);
    ASSERT_EQ(received.size(), heaps)
        << "the receiver counted "
        << receiver.stats()[recv_stat::packets_dropped_socket_overflow] << " packets and "
        << receiver.stats()[recv_stat::runs_dropped_socket_overflow]
        << " runs dropped by its full socket buffer";
    for (std::size_t i = 0; i < heaps; i++) {
        EXPECT_EQ(received[i].cnt(), i + 1);
        EXPECT_EQ(pattern_mismatches(received[i], payload_id, heap_size, i + 1), 0u)
            << "heap " << i + 1;
    }
    const send_stats s = sender.get_stats();
    EXPECT_EQ(s[send_stat::heaps], heaps);
    EXPECT_EQ(s[send_stat::packets], heaps * 12);
    EXPECT_EQ(s[send_stat::heaps_failed], 0u);
    EXPECT_EQ(s[send_stat::packets_failed], 0u);
    EXPECT_EQ(receiver.stats()[recv_stat::packets], heaps * 12);
}

INSTANTIATE_TEST_SUITE_P(
    Destinations,
    SendToKernel,
    ::testing::Values(traffic_case{ "unicast_comp_vector", false, 0 },
                      traffic_case{ "unicast_busy_poll", false, -1 },
                      traffic_case{ "multicast_comp_vector", true, 0 },
                      traffic_case{ "multicast_busy_poll", true, -1 }),
    [](const ::testing::TestParamInfo<traffic_case>& info) { return info.param.name; });

/*! The emulated NIC offloads checksums unless run with SPEAD_EMU_IP_CSUM=0 (a NIC
 * without the offload: the stream must compute the IPv4 header checksum itself). */
bool nic_offloads_checksums()
{
    const char* value = std::getenv("SPEAD_EMU_IP_CSUM");
    return !value || std::string(value) != "0";
}

/*! Every header field of the frames on the wire, checksums included. */
void check_frames_on_the_wire(bool multicast)
{
    const std::string destination = multicast ? multicast_group : host(2).ip;
    frame_sniffer sniffer;
    constexpr std::size_t heap_size = 20000; // 3 packets
    std::vector<std::uint8_t> payload(heap_size);
    fill_pattern(payload.data(), heap_size, 7);
    boost::asio::io_context io;
    auto config = sender_config(destination, 0);
    config.set_ttl(5);
    send::udp_ibv_stream sender(io, jumbo_stream(), config);
    sender.send_heap(payload_heap(payload.data(), heap_size), 7);

    const std::string expected_dst_mac =
        multicast ? "01:00:5e:0a:00:01" : host(2).mac; // 239.10.0.1 -> low 23 bits
    for (int i = 0; i < 3; i++) {
        const auto f = sniffer.next_udp_frame(port);
        ASSERT_FALSE(f.empty()) << "frame " << i;
        const std::uint8_t* ip = f.data() + 14;
        const std::uint8_t* udp = ip + 20;
        EXPECT_EQ(mac_text(f.data()), expected_dst_mac);
        EXPECT_EQ(mac_text(f.data() + 6), host(1).mac);
        EXPECT_EQ(be16(f.data() + 12), 0x0800);
        EXPECT_EQ(ip[0], 0x45);
        EXPECT_EQ(be16(ip + 2), f.size() - 14);
        EXPECT_EQ(be16(ip + 6), 0x4000) << "DF set, no fragment offset";
        EXPECT_EQ(ip[8], 5) << "TTL";
        EXPECT_EQ(ip[9], IPPROTO_UDP);
        EXPECT_EQ(fold(ones_sum(ip, 20)), 0xffff) << "IPv4 header checksum";
        char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, ip + 12, src, sizeof(src));
        inet_ntop(AF_INET, ip + 16, dst, sizeof(dst));
        EXPECT_EQ(src, host(1).ip);
        EXPECT_EQ(dst, destination);
        EXPECT_NE(be16(udp), 0) << "source port";
        EXPECT_EQ(be16(udp + 2), port);
        EXPECT_EQ(be16(udp + 4), f.size() - 34);
        if (nic_offloads_checksums()) {
            // The NIC filled it (IBV_SEND_IP_CSUM covers UDP too): it must verify.
            ASSERT_NE(be16(udp + 6), 0) << "UDP checksum left to the NIC";
            std::uint32_t pseudo = ones_sum(ip + 12, 8) + IPPROTO_UDP + be16(udp + 4);
            EXPECT_EQ(fold(ones_sum(udp, f.size() - 34, pseudo)), 0xffff)
                << "UDP checksum";
        } else {
            EXPECT_EQ(be16(udp + 6), 0)
                << "no UDP checksum in software (allowed in IPv4)";
        }
    }
}

TEST(SendFrames, UnicastHeadersAndChecksumsAreRight)
{
    REQUIRE_TOPOLOGY();
    check_frames_on_the_wire(false);
}

TEST(SendFrames, MulticastHeadersAndChecksumsAreRight)
{
    REQUIRE_TOPOLOGY();
    check_frames_on_the_wire(true);
}

TEST(SendFrames, EachSubstreamGoesToItsEndpoint)
{
    REQUIRE_TOPOLOGY();
    kernel_receiver unicast(endpoint_in(2, port));
    kernel_receiver group(std::string(multicast_group) + ":" + std::to_string(port + 1));
    std::vector<std::uint8_t> payload = patterned(30000, 1);
    boost::asio::io_context io;
    auto config = sender_config(host(2).ip, 0);
    config.add_endpoint(udp::endpoint(make_address_v4(multicast_group), port + 1));
    send::udp_ibv_stream sender(io, jumbo_stream(), config);
    ASSERT_EQ(sender.get_num_substreams(), 2u);
    sender.send_heap(payload_heap(payload.data(), payload.size()), 1, 0);
    fill_pattern(payload.data(), payload.size(), 2);
    sender.send_heap(payload_heap(payload.data(), payload.size()), 2, 1);

    auto a = unicast.take(1);
    auto b = group.take(1);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(a[0].cnt(), 1u);
    EXPECT_EQ(pattern_mismatches(a[0], payload_id, payload.size(), 1), 0u);
    EXPECT_EQ(b[0].cnt(), 2u);
    EXPECT_EQ(pattern_mismatches(b[0], payload_id, payload.size(), 2), 0u);
    EXPECT_EQ(unicast.stats()[recv_stat::heaps], 1u) << "nothing crossed over";
    EXPECT_EQ(group.stats()[recv_stat::heaps], 1u);
}

TEST(SendFrames, RoutedUnicastUsesTheGatewaysMac)
{
    REQUIRE_TOPOLOGY();
    // 10.99.0.5 lives on host 2 but is reached through a route via host 2's address.
    const std::string h1 = "ip netns exec " + host(1).ns + " ";
    const std::string h2 = "ip netns exec " + host(2).ns + " ";
    ASSERT_EQ(std::system((h2 + "ip addr add 10.99.0.5/32 dev eth0").c_str()), 0);
    ASSERT_EQ(std::system((h1 + "ip route add 10.99.0.0/24 via " + host(2).ip).c_str()),
              0);
    kernel_receiver receiver("10.99.0.5:" + std::to_string(port));
    std::vector<std::uint8_t> payload = patterned(20000, 3);
    boost::asio::io_context io;
    send::udp_ibv_stream sender(io, jumbo_stream(), sender_config("10.99.0.5", 0));
    sender.send_heap(payload_heap(payload.data(), payload.size()), 3);
    auto got = receiver.take(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(pattern_mismatches(got[0], payload_id, payload.size(), 3), 0u);
}

// ---- zero copy ------------------------------------------------------------------

TEST(SendZeroCopy, ItemsInARegisteredRegionGoOutZeroCopy)
{
    REQUIRE_TOPOLOGY();
    kernel_receiver receiver(endpoint_in(2, port));
    constexpr std::size_t heaps = 16, heap_size = 64 * 1024; // 8 packets each
    std::vector<std::uint8_t> region(heaps * heap_size);
    for (std::size_t i = 0; i < heaps; i++)
        fill_pattern(region.data() + i * heap_size, heap_size, i + 1);
    boost::asio::io_context io;
    auto config = sender_config(host(2).ip, 0);
    config.add_memory_region(region.data(), region.size());
    send::udp_ibv_stream sender(io, jumbo_stream(), config);
    send_paced_by_receiver(receiver, heaps, heap_size, [&](std::size_t i) {
        sender.send_heap(payload_heap(region.data() + i * heap_size, heap_size),
                         std::int64_t(i + 1));
    });

    const auto got = receiver.take(heaps);
    ASSERT_EQ(got.size(), heaps);
    for (std::size_t i = 0; i < heaps; i++)
        EXPECT_EQ(pattern_mismatches(got[i], payload_id, heap_size, i + 1), 0u);
    const send_stats s = sender.get_stats();
    EXPECT_EQ(s[send_stat::packets], heaps * 8);
    EXPECT_EQ(s[send_stat::packets_zero_copy], heaps * 8);
    EXPECT_EQ(s[send_stat::packets_copied], 0u);
}

TEST(SendZeroCopy, ItemsOutsideEveryRegionAreCopied)
{
    REQUIRE_TOPOLOGY();
    kernel_receiver receiver(endpoint_in(2, port));
    constexpr std::size_t heap_size = 64 * 1024;
    std::vector<std::uint8_t> region(heap_size), elsewhere(heap_size);
    fill_pattern(elsewhere.data(), heap_size, 1);
    boost::asio::io_context io;
    auto config = sender_config(host(2).ip, -1);
    config.add_memory_region(region.data(), region.size());
    send::udp_ibv_stream sender(io, jumbo_stream(), config);
    sender.send_heap(payload_heap(elsewhere.data(), heap_size), 1);

    const auto got = receiver.take(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(pattern_mismatches(got[0], payload_id, heap_size, 1), 0u);
    const send_stats s = sender.get_stats();
    EXPECT_EQ(s[send_stat::packets], 8u);
    EXPECT_EQ(s[send_stat::packets_copied], 8u);
    EXPECT_EQ(s[send_stat::packets_zero_copy], 0u);
}

/*! A heap of \p items items of \p item_size bytes, \p stride apart in \p memory. */
send::heap many_items(const std::uint8_t* memory,
                      std::size_t items,
                      std::size_t item_size,
                      std::size_t stride)
{
    send::heap h;
    for (std::size_t i = 0; i < items; i++)
        h.add_item(payload_id + i, memory + i * stride, item_size, false);
    return h;
}

void expect_many_items(const recv::heap& h,
                       const std::uint8_t* memory,
                       std::size_t items,
                       std::size_t item_size,
                       std::size_t stride)
{
    for (std::size_t i = 0; i < items; i++) {
        const recv::item* it = h.find(payload_id + i);
        ASSERT_NE(it, nullptr) << "item " << i;
        ASSERT_EQ(it->length, item_size);
        EXPECT_TRUE(std::equal(it->data, it->data + item_size, memory + i * stride))
            << "item " << i;
    }
}

/*! Sends one heap of \p items items of 200 bytes, \p stride apart in one registered
 * region, to a kernel receiver in host 2, checks every byte that arrived, and returns
 * the sender's counters. */
send_stats send_items_of_one_region(std::size_t items, std::size_t stride)
{
    kernel_receiver receiver(endpoint_in(2, port));
    std::vector<std::uint8_t> region(items * stride);
    fill_pattern(region.data(), region.size(), stride);
    boost::asio::io_context io;
    auto config = sender_config(host(2).ip, 0);
    config.add_memory_region(region.data(), region.size());
    send::udp_ibv_stream sender(io, jumbo_stream(), config);
    sender.send_heap(many_items(region.data(), items, 200, stride), 1);

    const auto got = receiver.take(1);
    EXPECT_EQ(got.size(), 1u);
    if (!got.empty())
        expect_many_items(got[0], region.data(), items, 200, stride);
    return sender.get_stats();
}

TEST(SendZeroCopy, AdjacentItemsInARegionShareOneSge)
{
    REQUIRE_TOPOLOGY();
    // 20 adjacent 200-byte items: one packet, 20 pieces, but one contiguous range.
    const send_stats s = send_items_of_one_region(20, 200);
    EXPECT_EQ(s[send_stat::packets], 1u);
    EXPECT_EQ(s[send_stat::packets_zero_copy], 1u);
}

TEST(SendZeroCopy, PacketsNeedingMoreSgesThanTheQueueTakesAreCopied)
{
    REQUIRE_TOPOLOGY();
    // 20 items with gaps between them: 21 SGEs would be needed (header + 20).
    const send_stats s = send_items_of_one_region(20, 256);
    EXPECT_EQ(s[send_stat::packets], 1u);
    EXPECT_EQ(s[send_stat::packets_copied], 1u);
}

TEST(SendZeroCopy, ItemsInSeveralRegionsAndOutsideMixInOnePacket)
{
    REQUIRE_TOPOLOGY();
    kernel_receiver receiver(endpoint_in(2, port));
    std::vector<std::uint8_t> a(1000), b(1000), outside(1000);
    fill_pattern(a.data(), a.size(), 1);
    fill_pattern(b.data(), b.size(), 2);
    fill_pattern(outside.data(), outside.size(), 3);
    boost::asio::io_context io;
    auto config = sender_config(host(2).ip, 0);
    config.add_memory_region(b.data(), b.size()).add_memory_region(a.data(), a.size());
    send::udp_ibv_stream sender(io, jumbo_stream(), config);
    send::heap h;
    h.add_item(0x1000, a.data(), a.size(), false);
    h.add_item(0x1001, outside.data(), outside.size(), false);
    h.add_item(0x1002, b.data(), b.size(), false);
    sender.send_heap(h, 1);

    const auto got = receiver.take(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(pattern_mismatches(got[0], 0x1000, 1000, 1), 0u);
    EXPECT_EQ(pattern_mismatches(got[0], 0x1001, 1000, 3), 0u);
    EXPECT_EQ(pattern_mismatches(got[0], 0x1002, 1000, 2), 0u);
    EXPECT_EQ(sender.get_stats()[send_stat::packets_copied], 1u)
        << "a copied piece makes the packet count as copied";
}

// ---- the send queue ---------------------------------------------------------------

/*! Sends \p heaps heaps of \p heap_size through a ring of \p slots slots, queued
 * asynchronously, and checks every one completes and arrives. */
void long_burst(std::size_t slots,
                std::size_t heaps,
                std::size_t heap_size,
                int comp_vector)
{
    kernel_receiver receiver(endpoint_in(2, port));
    std::vector<std::uint8_t> region(heaps * heap_size);
    for (std::size_t i = 0; i < heaps; i++)
        fill_pattern(region.data() + i * heap_size, heap_size, i + 1);
    const std::size_t packets_per_heap = (heap_size + 8927) / 8928;
    io_thread io;
    auto config = sender_config(host(2).ip, comp_vector);
    config.set_buffer_size(slots * (jumbo_packet + 42)); // rounds to whole slots
    config.add_memory_region(region.data(), region.size());
    send::stream_config stream_config = jumbo_stream();
    stream_config.set_max_heaps(32);
    // Paced so that the kernel receiver keeps up; the ring still wraps constantly.
    stream_config.set_rate(200e6);
    send::udp_ibv_stream sender(io.io, stream_config, config);
    std::vector<send::heap> hs;
    hs.reserve(heaps);
    for (std::size_t i = 0; i < heaps; i++)
        hs.push_back(payload_heap(region.data() + i * heap_size, heap_size));
    std::atomic<std::size_t> ok{ 0 }, failed{ 0 }, rejected{ 0 };
    auto handler = [&](const boost::system::error_code& ec, std::size_t) {
        if (ec == boost::asio::error::would_block)
            rejected++; // the queue was full: async_send_heap returned false
        else
            (ec ? failed : ok)++;
    };
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    for (std::size_t i = 0; i < heaps; i++) {
        // A full queue refuses the heap (and counts it): try again shortly.
        while (!sender.async_send_heap(hs[i], handler, std::int64_t(i + 1))) {
            ASSERT_LT(std::chrono::steady_clock::now(), deadline)
                << "stuck at heap " << i;
            std::this_thread::sleep_for(200us);
        }
    }
    sender.flush();
    ASSERT_TRUE(wait_for([&] { return ok + failed == heaps; }, 10000ms));
    EXPECT_EQ(ok, heaps);
    EXPECT_EQ(failed, 0u);
    const send_stats s = sender.get_stats();
    EXPECT_EQ(s[send_stat::heaps], heaps);
    EXPECT_EQ(s[send_stat::packets], heaps * packets_per_heap);
    EXPECT_EQ(s[send_stat::packets_zero_copy], heaps * packets_per_heap);
    EXPECT_EQ(s[send_stat::packets_failed], 0u);

    // The sender is what is under test; a kernel receiver on a loaded machine may
    // still overflow its socket, and then it counts what it lost.
    const auto got = receiver.take(heaps);
    const recv_stats r = receiver.stats();
    const std::uint64_t lost = r[recv_stat::packets_dropped_socket_overflow] +
                               r[recv_stat::runs_dropped_socket_overflow];
    EXPECT_TRUE(spead_test::packets_reconcile(heaps * packets_per_heap, r));
    if (lost == 0)
        EXPECT_EQ(got.size(), heaps);
    else
        EXPECT_GE(got.size() + lost, heaps)
            << "a heap lost more than its dropped packets";
    std::size_t bad = 0;
    std::uint64_t previous = 0;
    for (const auto& h : got) {
        bad += h.cnt() <= previous ||
               pattern_mismatches(h, payload_id, heap_size, h.cnt()) != 0;
        previous = h.cnt();
    }
    EXPECT_EQ(bad, 0u);
}

TEST(SendQueue, LongBurstThroughASmallRing)
{
    REQUIRE_TOPOLOGY();
    long_burst(4, 600, 64 * 1024, 0);
}

TEST(SendQueue, LongBurstThroughASmallRingBusyPolling)
{
    REQUIRE_TOPOLOGY();
    long_burst(5, 600, 64 * 1024, -1);
}

TEST(SendQueue, OneSlotRingSignalsEveryPacket)
{
    REQUIRE_TOPOLOGY();
    long_burst(1, 50, 64 * 1024, 0);
}

TEST(SendQueue, CompVectorIsTakenModuloTheDevicesVectors)
{
    REQUIRE_TOPOLOGY();
    // Run with SPEAD_EMU_COMP_VECTORS=4: the device refuses vector 1003 itself.
    kernel_receiver receiver(endpoint_in(2, port));
    std::vector<std::uint8_t> payload = patterned(20000, 1);
    boost::asio::io_context io;
    send::udp_ibv_stream sender(io, jumbo_stream(), sender_config(host(2).ip, 1003));
    sender.send_heap(payload_heap(payload.data(), payload.size()), 1);
    const auto got = receiver.take(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(pattern_mismatches(got[0], payload_id, payload.size(), 1), 0u);
}

TEST(SendQueue, ErrorCompletionFailsTheHeapAndTheQueueRecovers)
{
    REQUIRE_TOPOLOGY();
    kernel_receiver receiver(endpoint_in(2, port));
    std::vector<std::uint8_t> payload = patterned(30000, 1);
    boost::asio::io_context io;
    send::udp_ibv_stream sender(io, jumbo_stream(), sender_config(host(2).ip, 0));
    const std::string h1 = "ip netns exec " + host(1).ns + " ip link set eth0 mtu ";
    // The MTU shrinks under the stream: the NIC refuses the jumbo frames.
    ASSERT_EQ(std::system((h1 + "1500").c_str()), 0);
    try {
        sender.send_heap(payload_heap(payload.data(), payload.size()), 1);
        ADD_FAILURE() << "a heap larger than the MTU was sent";
    } catch (const boost::system::system_error& e) {
        EXPECT_EQ(e.code(), boost::system::errc::message_size) << e.what();
    }
    ASSERT_EQ(std::system((h1 + "9000").c_str()), 0);
    ASSERT_TRUE(wait_for(
        [&] {
            return std::system(("ip netns exec " + host(1).ns +
                                " ip link show eth0 | grep -q 'state UP'")
                                   .c_str()) == 0;
        },
        5000ms));
    fill_pattern(payload.data(), payload.size(), 2);
    sender.send_heap(payload_heap(payload.data(), payload.size()), 2);

    const auto got = receiver.take(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].cnt(), 2u);
    EXPECT_EQ(pattern_mismatches(got[0], payload_id, payload.size(), 2), 0u);
    const send_stats s = sender.get_stats();
    EXPECT_EQ(s[send_stat::heaps_failed], 1u);
    EXPECT_EQ(s[send_stat::heaps], 1u);
    EXPECT_GE(s[send_stat::packets_failed], 1u);
}

// ---- lifecycle ------------------------------------------------------------------

int cycles_wanted(int fallback)
{
    const char* value = std::getenv("IBV_TEST_CYCLES");
    return value ? std::atoi(value) : fallback;
}

TEST(SendLifecycle, StartStopCyclesLeakNoFdsThreadsOrVerbsObjects)
{
    REQUIRE_TOPOLOGY();
    kernel_receiver receiver(endpoint_in(2, port));
    std::vector<std::uint8_t> region(20000);
    auto cycle = [&](int i) {
        boost::asio::io_context io;
        auto config = sender_config(host(2).ip, i % 2 ? -1 : 0);
        config.add_memory_region(region.data(), region.size());
        send::udp_ibv_stream sender(io, jumbo_stream(), config);
        fill_pattern(region.data(), region.size(), std::uint64_t(i + 1));
        sender.send_heap(payload_heap(region.data(), region.size()), i + 1);
    };
    cycle(0); // loggers, the shared device context: created once per process
    ASSERT_EQ(receiver.take(1).size(), 1u);
    const std::size_t fds = count_open_fds(), threads = count_threads();
    EXPECT_EQ(live_verbs_objects(host(1).ip), 0);
    const int cycles = cycles_wanted(40);
    // Each heap is waited for before the next cycle: 40 of them at once would not
    // fit a socket buffer capped by Debian's default net.core.rmem_max.
    for (int i = 1; i <= cycles; i++) {
        cycle(i);
        ASSERT_TRUE(receiver.wait_until_received(std::size_t(i))) << "cycle " << i;
    }
    EXPECT_EQ(count_open_fds(), fds);
    EXPECT_EQ(count_threads(), threads);
    EXPECT_EQ(live_verbs_objects(host(1).ip), 0) << "PDs, channels, CQs, QPs or MRs";
    const auto got = receiver.take(std::size_t(cycles));
    ASSERT_EQ(got.size(), std::size_t(cycles));
    for (int i = 1; i <= cycles; i++)
        EXPECT_EQ(pattern_mismatches(
                      got[i - 1], payload_id, region.size(), std::uint64_t(i + 1)),
                  0u);
}

TEST(SendLifecycle, DestroyingWithHeapsQueuedSendsThemFirst)
{
    REQUIRE_TOPOLOGY();
    kernel_receiver receiver(endpoint_in(2, port));
    // 8 heaps of 2 packets, all queued at once: what Debian's default
    // net.core.rmem_max (212992) lets the kernel receiver hold without loss.
    constexpr std::size_t heaps = 8, heap_size = 16 * 1024;
    std::vector<std::uint8_t> memory(heaps * heap_size);
    std::vector<send::heap> hs;
    for (std::size_t i = 0; i < heaps; i++) {
        fill_pattern(memory.data() + i * heap_size, heap_size, i + 1);
        hs.push_back(payload_heap(memory.data() + i * heap_size, heap_size));
    }
    std::atomic<std::size_t> ok{ 0 };
    {
        io_thread io;
        send::udp_ibv_stream sender(io.io, jumbo_stream(), sender_config(host(2).ip, 0));
        for (std::size_t i = 0; i < heaps; i++)
            ASSERT_TRUE(sender.async_send_heap(
                hs[i],
                [&](const boost::system::error_code& ec, std::size_t) { ok += !ec; },
                std::int64_t(i + 1)));
    } // the stream goes first, then the io thread runs the handlers and ends
    EXPECT_EQ(ok, heaps);
    EXPECT_EQ(receiver.take(heaps).size(), heaps);
}

// ---- errors at construction ---------------------------------------------------------

TEST(SendStreamErrors, WithoutEndpoints)
{
    REQUIRE_TOPOLOGY();
    boost::asio::io_context io;
    send::udp_ibv_config config;
    config.set_interface(host(1).ip);
    expect_invalid([&] { send::udp_ibv_stream(io, jumbo_stream(), config); },
                   "endpoints");
}

TEST(SendStreamErrors, WithoutInterface)
{
    REQUIRE_TOPOLOGY();
    boost::asio::io_context io;
    send::udp_ibv_config config;
    config.add_endpoint(udp::endpoint(make_address_v4(host(2).ip), port));
    expect_invalid([&] { send::udp_ibv_stream(io, jumbo_stream(), config); },
                   "interface_address");
}

TEST(SendStreamErrors, InterfaceAddressNotOfThisHost)
{
    REQUIRE_TOPOLOGY();
    boost::asio::io_context io;
    auto config = sender_config(host(2).ip, 0);
    // host 2's address, not ours: set_interface refuses it at once; the address
    // itself is only checked against the interfaces when the stream is built.
    expect_invalid([&] { config.set_interface(host(2).ip); }, "interface");
    config.set_interface_address(make_address_v4(host(2).ip));
    expect_invalid([&] { send::udp_ibv_stream(io, jumbo_stream(), config); },
                   "interface_address");
}

TEST(SendStreamErrors, OverlappingRegionsAreRejected)
{
    REQUIRE_TOPOLOGY();
    std::vector<std::uint8_t> memory(4096);
    boost::asio::io_context io;
    auto config = sender_config(host(2).ip, 0);
    config.add_memory_region(memory.data() + 2048, 1024)
        .add_memory_region(memory.data(), 1024)
        .add_memory_region(memory.data() + 1000, 100); // overlaps region 1
    try {
        send::udp_ibv_stream(io, jumbo_stream(), config);
        ADD_FAILURE() << "overlapping regions accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "memory_regions: region 1 overlaps region 2; each byte may be "
                  "registered once: merge overlapping regions into one");
    }
    // Touching is not overlapping.
    auto touching = sender_config(host(2).ip, 0);
    touching.add_memory_region(memory.data(), 1024)
        .add_memory_region(memory.data() + 1024, 1024);
    EXPECT_NO_THROW(send::udp_ibv_stream(io, jumbo_stream(), touching));
}

TEST(SendStreamErrors, PacketsLargerThanTheMtuAreRejected)
{
    REQUIRE_TOPOLOGY();
    boost::asio::io_context io;
    send::stream_config too_big;
    too_big.set_max_packet_size(8973); // 8973 + 28 > 9000
    try {
        send::udp_ibv_stream(io, too_big, sender_config(host(2).ip, 0));
        ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("max_packet_size: 8973 bytes", 0), 0u) << what;
        EXPECT_NE(what.find("MTU of 9000 of eth0"), std::string::npos) << what;
        EXPECT_NE(what.find("use at most 8972"), std::string::npos) << what;
    }
    send::stream_config fits;
    fits.set_max_packet_size(8972);
    EXPECT_NO_THROW(send::udp_ibv_stream(io, fits, sender_config(host(2).ip, 0)));
}

TEST(SendStreamErrors, UnknownUnicastNeighbourSaysHowToFixIt)
{
    REQUIRE_TOPOLOGY();
    boost::asio::io_context io;
    const auto start = std::chrono::steady_clock::now();
    try {
        send::udp_ibv_stream(io, jumbo_stream(), sender_config("10.77.0.99", 0));
        ADD_FAILURE() << "no error for a host that does not exist";
    } catch (const std::system_error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.code().value(), EHOSTUNREACH);
        EXPECT_NE(what.find("no MAC address for 10.77.0.99 on eth0"), std::string::npos)
            << what;
        EXPECT_NE(what.find("did not answer ARP"), std::string::npos) << what;
        EXPECT_NE(what.find("`ip route get 10.77.0.99`"), std::string::npos) << what;
        EXPECT_NE(what.find("`ip neigh show 10.77.0.99`"), std::string::npos) << what;
        EXPECT_NE(what.find("multicast"), std::string::npos) << what;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s) << "ARP wait is brief";
}

TEST(SendStreamErrors, BufferLargerThanTheDeviceAllowsIsClampedWithAWarning)
{
    REQUIRE_TOPOLOGY();
    auto sink = capture_sink::instance();
    boost::asio::io_context io;
    send::stream_config small;
    small.set_max_packet_size(64); // 128-byte slots: the WR limit binds first
    auto config = sender_config(host(2).ip, 0);
    config.set_buffer_size(std::size_t(40000) * 128); // the emulator allows 32768 WRs
    send::udp_ibv_stream sender(io, small, config);
    const std::string log = sink->text();
    EXPECT_NE(log.find("buffer_size: 5120000 bytes would need 40000 send work requests "
                       "but emu_eth0 allows 32768: using 4194304 bytes"),
              std::string::npos)
        << log;
}

/*! Runs in a child (see the two tests below): builds a stream, prints the outcome. */
TEST(SendStreamChild, BuildStream)
{
    if (!is_child())
        GTEST_SKIP() << "runs only as a child of another test";
    print_build_outcome([] {
        boost::asio::io_context io;
        send::udp_ibv_stream sender(io, jumbo_stream(), sender_config(host(2).ip, 0));
    });
}

TEST(SendStreamErrors, WithoutCapNetRawSaysWhichCapabilityAndHowToGrantIt)
{
    REQUIRE_TOPOLOGY();
    const auto child =
        run_child(without_cap_net_raw(), "SendStreamChild.BuildStream", {});
    ASSERT_EQ(child.exit_code, 0) << child.output;
    EXPECT_NE(child.output.find("SYSTEM_ERROR " + std::to_string(EPERM) +
                                ": ibv_create_qp(RAW_PACKET)"),
              std::string::npos)
        << child.output;
    EXPECT_NE(child.output.find("need CAP_NET_RAW"), std::string::npos) << child.output;
    EXPECT_NE(child.output.find("setcap cap_net_raw+ep"), std::string::npos)
        << child.output;
    EXPECT_NE(child.output.find("--ambient-caps=+net_raw"), std::string::npos)
        << child.output;
    EXPECT_EQ(child.output.find("BUILT"), std::string::npos);
}

TEST(SendStreamErrors, WithoutAnRdmaDeviceSaysSoAndWhatToUseInstead)
{
    REQUIRE_TOPOLOGY();
    // The emulator gives only loopback a device: eth0 has none.
    const auto child =
        run_child({}, "SendStreamChild.BuildStream", { "SPEAD_EMU_NETDEVS=lo" });
    ASSERT_EQ(child.exit_code, 0) << child.output;
    EXPECT_NE(child.output.find("SYSTEM_ERROR " + std::to_string(ENODEV)),
              std::string::npos)
        << child.output;
    EXPECT_NE(
        child.output.find("no RDMA device owns interface " + host(1).ip + " (eth0)"),
        std::string::npos)
        << child.output;
    EXPECT_NE(child.output.find("ibv_devices"), std::string::npos) << child.output;
    EXPECT_NE(child.output.find("transport udp"), std::string::npos) << child.output;
}

TEST(SendStreamErrors, MemlockTooLowPrintsTheLimitAndHowToRaiseIt)
{
    REQUIRE_TOPOLOGY();
    // 64 KiB may be pinned, the ring needs 512 KiB; without CAP_IPC_LOCK the limit holds.
    const auto child = run_child(with_64k_memlock(), "SendStreamChild.BuildStream", {});
    ASSERT_EQ(child.exit_code, 0) << child.output;
    EXPECT_NE(
        child.output.find("SYSTEM_ERROR " + std::to_string(ENOMEM) + ": ibv_reg_mr"),
        std::string::npos)
        << child.output;
    EXPECT_NE(child.output.find("RLIMIT_MEMLOCK is 64 KiB (hard limit 64 KiB)"),
              std::string::npos)
        << child.output;
    EXPECT_NE(child.output.find("ulimit -l unlimited"), std::string::npos)
        << child.output;
    EXPECT_NE(child.output.find("LimitMEMLOCK=infinity"), std::string::npos)
        << child.output;
}

// ---- config -------------------------------------------------------------------------

TEST(SendConfig, DefaultsAreSpead2s)
{
    send::udp_ibv_config c;
    EXPECT_EQ(c.get_buffer_size(), 512u * 1024);
    EXPECT_EQ(c.get_ttl(), 1);
    EXPECT_EQ(c.get_comp_vector(), 0);
    EXPECT_EQ(c.get_max_poll(), 10);
    EXPECT_TRUE(c.get_endpoints().empty());
    EXPECT_TRUE(c.get_memory_regions().empty());
    EXPECT_TRUE(c.get_interface_address().is_unspecified());
}

TEST(SendConfig, BufferSizeZeroMeansTheDefault)
{
    send::udp_ibv_config c;
    c.set_buffer_size(1 << 20);
    EXPECT_EQ(c.get_buffer_size(), 1u << 20);
    c.set_buffer_size(0);
    EXPECT_EQ(c.get_buffer_size(), 512u * 1024);
}

TEST(SendConfig, EndpointsMustBeIpv4DestinationsWithAPort)
{
    send::udp_ibv_config c;
    expect_invalid(
        [&] { c.add_endpoint(udp::endpoint(boost::asio::ip::make_address("::1"), 1)); },
        "endpoints");
    expect_invalid([&] { c.add_endpoint(udp::endpoint(make_address_v4("10.0.0.1"), 0)); },
                   "endpoints");
    expect_invalid(
        [&] { c.add_endpoint(udp::endpoint(make_address_v4("0.0.0.0"), 7148)); },
        "endpoints");
    expect_invalid([&] { c.set_endpoints(std::string("239.1.2.3")); }, "endpoints");
    expect_invalid([&] { c.set_endpoints(std::string("")); }, "endpoints");
    expect_invalid(
        [&] {
            c.set_endpoints(std::vector<udp::endpoint>{
                udp::endpoint(make_address_v4("0.0.0.0"), 1) });
        },
        "endpoints");
    EXPECT_TRUE(c.get_endpoints().empty()) << "a rejected list leaves the old one";
    c.set_endpoints(std::string("239.1.2.3+1:7148,10.0.0.2:9000"));
    ASSERT_EQ(c.get_endpoints().size(), 3u);
    EXPECT_EQ(c.get_endpoints()[1], udp::endpoint(make_address_v4("239.1.2.4"), 7148));
}

TEST(SendConfig, InterfaceMustBeIpv4OrALocalNetdev)
{
    send::udp_ibv_config c;
    expect_invalid(
        [&] { c.set_interface_address(boost::asio::ip::make_address("fe80::1")); },
        "interface_address");
    expect_invalid([&] { c.set_interface_address(make_address_v4("0.0.0.0")); },
                   "interface_address");
    expect_invalid([&] { c.set_interface_address(make_address_v4("239.1.1.1")); },
                   "interface_address");
    expect_invalid([&] { c.set_interface("no-such-netdev0"); }, "interface");
    expect_invalid([&] { c.set_interface(""); }, "interface");
    // The receiver's rule: set_interface takes a local interface only.
    expect_invalid([&] { c.set_interface("10.1.2.3"); }, "interface");
    c.set_interface_address(make_address_v4("10.1.2.3"));
    EXPECT_EQ(c.get_interface_address(), make_address_v4("10.1.2.3"));
    c.set_interface("lo"); // a netdev name resolves to its IPv4 address
    EXPECT_EQ(c.get_interface_address(), make_address_v4("127.0.0.1"));
}

TEST(SendConfig, TtlIsAnOctet)
{
    send::udp_ibv_config c;
    expect_invalid([&] { c.set_ttl(-1); }, "ttl");
    expect_invalid([&] { c.set_ttl(256); }, "ttl");
    c.set_ttl(0);
    EXPECT_EQ(c.get_ttl(), 0);
    c.set_ttl(255);
    EXPECT_EQ(c.get_ttl(), 255);
}

TEST(SendConfig, MaxPollMustBePositive)
{
    send::udp_ibv_config c;
    expect_invalid([&] { c.set_max_poll(0); }, "max_poll");
    expect_invalid([&] { c.set_max_poll(-3); }, "max_poll");
    c.set_max_poll(1);
    EXPECT_EQ(c.get_max_poll(), 1);
}

TEST(SendConfig, AnyCompVectorIsAccepted)
{
    send::udp_ibv_config c;
    c.set_comp_vector(-1);
    EXPECT_EQ(c.get_comp_vector(), -1);
    c.set_comp_vector(1000); // taken modulo the device's vectors when built
    EXPECT_EQ(c.get_comp_vector(), 1000);
}

TEST(SendConfig, MemoryRegionsNeedAPointerAndASize)
{
    send::udp_ibv_config c;
    std::uint8_t memory[16];
    expect_invalid([&] { c.add_memory_region(nullptr, 16); }, "memory_regions");
    expect_invalid([&] { c.add_memory_region(memory, 0); }, "memory_regions");
    expect_invalid(
        [&] {
            c.set_memory_regions({ { memory, 16 }, { nullptr, 1 } });
        },
        "memory_regions");
    EXPECT_TRUE(c.get_memory_regions().empty());
    c.set_memory_regions({ { memory, 8 }, { memory + 8, 8 } });
    EXPECT_EQ(c.get_memory_regions().size(), 2u);
    c.add_memory_region(memory, 4); // overlap is the stream's to reject
    EXPECT_EQ(c.get_memory_regions().size(), 3u);
}

} // namespace

int main(int argc, char** argv)
{
    // The sender is host 1; receivers move threads into host 2 as they need.
    return ibv_test::run_all_tests_in_host(argc, argv, 1);
}
