/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The pieces of SPEAD over TCP that need no socket: the framing decoder (spead2's
// framing: packets back to back, lengths from their headers), the adapter that makes
// a byte stream packets with it (framed_incoming), and tcp_config validation (each bad
// value refused naming its parameter).

#include "byte_helpers.h"
#include "error_message.h"
#include "protocol/frame_decoder.h"
#include "sanitizers.h"
#include "transport/tcp/framed_incoming.h"
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_tcp.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <boost/asio/ip/address.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using spead_test::expect_invalid;

std::vector<std::uint8_t> packet_of(std::size_t payload, std::size_t mps = 9000)
{
    std::vector<std::uint8_t> value(payload, 0xab);
    send::heap h;
    h.add_item(0x1000, value.data(), value.size(), false);
    auto packets = spead_test::packetise(h, 7, mps);
    EXPECT_EQ(packets.size(), 1u);
    return packets.front();
}

TEST(FrameDecoder, FindsEachPacketOfAStream)
{
    const auto a = packet_of(100);
    const auto b = packet_of(3000);
    std::vector<std::uint8_t> bytes(a);
    bytes.insert(bytes.end(), b.begin(), b.end());
    frame f = next_frame(bytes.data(), bytes.size(), 65536);
    ASSERT_EQ(f.status, frame_status::packet);
    EXPECT_EQ(f.size, a.size());
    f = next_frame(bytes.data() + a.size(), bytes.size() - a.size(), 65536);
    ASSERT_EQ(f.status, frame_status::packet);
    EXPECT_EQ(f.size, b.size());
}

TEST(FrameDecoder, NeedsMoreForEveryProperPrefix)
{
    const auto p = packet_of(500);
    for (std::size_t n = 0; n < p.size(); n++)
        EXPECT_EQ(next_frame(p.data(), n, 65536).status, frame_status::need_more) << n;
    EXPECT_EQ(next_frame(p.data(), p.size(), 65536).status, frame_status::packet);
}

TEST(FrameDecoder, GarbageIsRefused)
{
    auto p = packet_of(64);
    p[0] = 0x54; // magic
    EXPECT_EQ(next_frame(p.data(), p.size(), 65536).status, frame_status::garbage);
    const auto text =
        spead_test::from_hex("47 45 54 20 2f 20 48 54 54 50"); // "GET / HTTP"
    EXPECT_EQ(next_frame(text.data(), text.size(), 65536).status, frame_status::garbage);
    // A header without PAYLOAD_LENGTH: its length cannot be known.
    const auto no_length = spead_test::from_hex("53 04 03 05 00 00 00 01"
                                                "80 00 01 00 00 00 00 07");
    EXPECT_EQ(next_frame(no_length.data(), no_length.size(), 65536).status,
              frame_status::garbage);
}

TEST(FrameDecoder, TooLargeIsKnownBeforeThePayloadArrives)
{
    const auto p = packet_of(5000);
    const std::size_t header_part = 8 + 8 * 5; // header and item pointers only
    const frame f = next_frame(p.data(), header_part, 4096);
    EXPECT_EQ(f.status, frame_status::too_large);
    EXPECT_EQ(f.size, p.size());
    // So many item pointers that they alone exceed the limit.
    const auto many = spead_test::from_hex("53 04 03 05 00 00 ff ff");
    EXPECT_EQ(next_frame(many.data(), many.size(), 65536).status,
              frame_status::too_large);
}

/*! framed_incoming over a script of reads: each entry is what one read returns. */
struct scripted_bytes : transport::framed_incoming {
    explicit scripted_bytes(std::size_t max_packet_size)
        : framed_incoming(max_packet_size)
    {
    }
    int fd() const override { return -1; }
    std::ptrdiff_t read_bytes(std::uint8_t* buffer, std::size_t size) override
    {
        if (reads.empty())
            return closed ? 0 : -EAGAIN;
        std::vector<std::uint8_t>& next = reads.front();
        const std::size_t n = std::min(size, next.size());
        std::memcpy(buffer, next.data(), n);
        next.erase(next.begin(), next.begin() + std::ptrdiff_t(n));
        if (next.empty())
            reads.pop_front();
        return std::ptrdiff_t(n);
    }
    std::deque<std::vector<std::uint8_t>> reads;
    bool closed = false; //!< once the script is read: a clean close, else -EAGAIN
};

/*! Everything \p in gives until it ends or its script is read: packets (copied),
 * and the ending (-EAGAIN: none yet). */
std::ptrdiff_t receive_all(scripted_bytes& in,
                           std::vector<std::vector<std::uint8_t>>& packets)
{
    for (int calls = 0; calls < 1000; calls++) {
        recv::packet_view views[4];
        const std::ptrdiff_t r = in.receive(views, 4);
        if (r == -EAGAIN && in.reads.empty() && !in.closed)
            return r;
        if (r == -EAGAIN)
            continue;
        if (r <= 0)
            return r;
        for (std::ptrdiff_t i = 0; i < r; i++)
            packets.emplace_back(views[i].data, views[i].data + views[i].size);
        in.release();
    }
    ADD_FAILURE() << "never ended";
    return 1;
}

std::vector<std::uint8_t> cat(const std::vector<std::vector<std::uint8_t>>& parts)
{
    std::vector<std::uint8_t> out;
    for (const auto& p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

TEST(FramedIncoming, PacketsSplitAcrossReadsComeWholeAndInPlace)
{
    const auto a = packet_of(300), b = packet_of(1000), c = packet_of(20);
    const auto all = cat({ a, b, c });
    scripted_bytes in(65536);
    // Cut at arbitrary points: inside a's payload, inside b's header, and c whole.
    in.reads = { { all.begin(), all.begin() + 100 },
                 { all.begin() + 100, all.begin() + std::ptrdiff_t(a.size()) + 5 },
                 { all.begin() + std::ptrdiff_t(a.size()) + 5, all.end() } };
    recv::packet_view views[4];
    EXPECT_EQ(in.receive(views, 4), -EAGAIN); // 100 bytes: no whole packet yet
    ASSERT_EQ(in.receive(views, 4), 1);
    EXPECT_EQ(std::vector<std::uint8_t>(views[0].data, views[0].data + views[0].size), a);
    in.release();
    in.closed = true;
    std::vector<std::vector<std::uint8_t>> rest;
    EXPECT_EQ(receive_all(in, rest), 0);
    ASSERT_EQ(rest.size(), 2u);
    EXPECT_EQ(rest[0], b);
    EXPECT_EQ(rest[1], c);
    EXPECT_EQ(in.unfinished_bytes(), 0u);
}

TEST(FramedIncoming, GivesViewsOfItsBufferWithoutCopying)
{
    const auto a = packet_of(50), b = packet_of(60);
    scripted_bytes in(65536);
    in.reads = { cat({ a, b }) };
    recv::packet_view views[4];
    ASSERT_EQ(in.receive(views, 4), 2);
    EXPECT_EQ(views[1].data, views[0].data + a.size()) << "back to back in one buffer";
}

// Issue 38 item 6: the buffer was 2 x max_packet_size from the first read (32 MiB
// here, 128 MiB at the limit) whatever the peer sent; it now follows the packets.
TEST(FramedIncoming, ItsBufferGrowsWithThePacketsReceived)
{
    constexpr std::size_t mib = std::size_t(1) << 20;
    const auto small = packet_of(100), large = packet_of(mib, 2 * mib);
    scripted_bytes in(16 * mib);
    EXPECT_EQ(in.buffer_size(), 0u); // nothing before the first read
    in.reads = { small };
    std::vector<std::vector<std::uint8_t>> got;
    receive_all(in, got);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(in.buffer_size(), 256 * 1024u);
    in.reads = { large };
    in.closed = true;
    EXPECT_EQ(receive_all(in, got), 0);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1], large);
    EXPECT_GE(in.buffer_size(), large.size());
    EXPECT_LE(in.buffer_size(), 2 * mib) << "grown beyond what the packet needs";
}

/*! This process's address space, bytes (VmSize of /proc/self/status). */
std::size_t address_space()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmSize:", 0) == 0)
            return std::size_t(std::stoul(line.substr(7))) * 1024;
    return 0;
}

// Issue 38 item 6: the buffer was made whole (2 x max_packet_size) at the first read,
// and a bad_alloc there ended the whole stream. A buffer that cannot grow now ends its
// connection (-ENOMEM, named), and nothing else.
TEST(FramedIncoming, ABufferThatCannotGrowEndsTheConnectionOnly)
{
    if (spead_test::under_sanitizer)
        GTEST_SKIP()
            << "a sanitizer's shadow memory needs the address space limited here";
    constexpr std::size_t mib = std::size_t(1) << 20;
    // A packet that declares 1 GiB of payload, and 48 MiB of it.
    auto bytes = spead_test::from_hex("53 04 03 05 00 00 00 04"
                                      "80 00 01 00 00 00 00 01"
                                      "80 00 02 00 40 00 00 00"
                                      "80 00 03 00 00 00 00 00"
                                      "80 00 04 00 40 00 00 00");
    bytes.resize(48 * mib, 0xab);
    scripted_bytes in((std::size_t(1) << 30) + 64);
    in.reads = { std::move(bytes) };
    rlimit saved{};
    getrlimit(RLIMIT_AS, &saved);
    rlimit low = saved;
    low.rlim_cur = address_space() + 64 * mib;
    ASSERT_EQ(setrlimit(RLIMIT_AS, &low), 0);
    std::vector<std::vector<std::uint8_t>> got;
    const std::ptrdiff_t r = receive_all(in, got);
    setrlimit(RLIMIT_AS, &saved);
    EXPECT_EQ(r, -ENOMEM);
    EXPECT_GE(in.buffer_size(), 8 * mib); // it grew as far as it could
    EXPECT_LT(in.buffer_size(), 64 * mib);
    EXPECT_NE(in.describe_ending(r).find("no memory for its buffer"), std::string::npos);
}

TEST(FramedIncoming, AHeaderSplitAcrossReadsIsFramedOnceWhole)
{
    const auto a = packet_of(64);
    scripted_bytes in(65536);
    for (std::size_t i = 0; i < a.size(); i += 3) // 3 bytes a read: 8-byte header cut
        in.reads.emplace_back(a.begin() + std::ptrdiff_t(i),
                              a.begin() + std::ptrdiff_t(std::min(i + 3, a.size())));
    in.closed = true;
    std::vector<std::vector<std::uint8_t>> got;
    EXPECT_EQ(receive_all(in, got), 0);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], a);
}

TEST(FramedIncoming, ATooLargePacketEndsTheConnectionAfterThoseBeforeIt)
{
    const auto small = packet_of(100), large = packet_of(5000);
    scripted_bytes in(1024);
    in.reads = { cat({ small, large }) };
    std::vector<std::vector<std::uint8_t>> got;
    EXPECT_EQ(receive_all(in, got), -EMSGSIZE);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], small);
    EXPECT_NE(in.describe_ending(-EMSGSIZE).find("above max_packet_size (1024)"),
              std::string::npos)
        << in.describe_ending(-EMSGSIZE);
}

TEST(FramedIncoming, GarbageEndsTheConnection)
{
    scripted_bytes in(65536);
    in.reads = { std::vector<std::uint8_t>(64, 0x42) };
    std::vector<std::vector<std::uint8_t>> got;
    EXPECT_EQ(receive_all(in, got), -EBADMSG);
    EXPECT_TRUE(got.empty());
}

TEST(FramedIncoming, ACleanCloseWithinAPacketLeavesItsBytesUnfinished)
{
    const auto a = packet_of(100), b = packet_of(100);
    scripted_bytes in(65536);
    const auto both = cat({ a, b });
    in.reads = { { both.begin(), both.begin() + std::ptrdiff_t(a.size() + 30) } };
    in.closed = true;
    std::vector<std::vector<std::uint8_t>> got;
    EXPECT_EQ(receive_all(in, got), 0);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(in.unfinished_bytes(), 30u); // the connected reader counts it partial
    EXPECT_NE(in.describe_ending(0).find("(30 bytes of it discarded)"),
              std::string::npos);
}

TEST(TcpConfig, BadValuesAreRefusedNamingTheParameter)
{
    expect_invalid([] { recv::tcp_config().set_endpoint("127.0.0.1:0"); }, "endpoint");
    expect_invalid([] { recv::tcp_config().set_endpoint("nonsense"); }, "endpoint");
    expect_invalid([] { recv::tcp_config().set_endpoint("127.0.0.1+1:7148"); },
                   "endpoint");
    expect_invalid([] { recv::tcp_config().set_max_connections(0); }, "max_connections");
    expect_invalid([] { recv::tcp_config().set_max_connections(5000); },
                   "max_connections");
    expect_invalid([] { recv::tcp_config().set_allowed_peers("10.0.0.0/40"); },
                   "allowed_peers");
    expect_invalid([] { recv::tcp_config().set_max_packet_size(10); }, "max_packet_size");
    expect_invalid([] { recv::tcp_config().set_buffer_size(std::size_t(1) << 31); },
                   "buffer_size");
    expect_invalid([] { recv::tcp_config().set_peer_timeout(500ms); }, "peer_timeout");
    expect_invalid([] { recv::tcp_config().set_idle_timeout(-1ms); }, "idle_timeout");
    expect_invalid([] { send::tcp_config().set_endpoint(":7148"); }, "endpoint");
    expect_invalid([] { send::tcp_config().set_endpoint("no.such.host.invalid:7148"); },
                   "endpoint");
    expect_invalid([] { send::tcp_config().set_connect_timeout(0ms); },
                   "connect_timeout");
    expect_invalid([] { send::tcp_config().set_reconnect_backoff(2s, 1s); },
                   "reconnect_min");
    expect_invalid([] { send::tcp_config().set_interface("no-such-netdev0"); },
                   "interface");
    expect_invalid([] { send::tcp_config().set_peer_timeout(10ms); }, "peer_timeout");
}

TEST(TcpConfig, DefaultsFollowSpead2)
{
    const recv::tcp_config r;
    EXPECT_EQ(r.get_max_packet_size(), 65536u);
    EXPECT_EQ(r.get_buffer_size(), 208u * 1024);
    EXPECT_EQ(r.get_max_connections(), 1u);
    EXPECT_FALSE(r.get_keep_listening());
    EXPECT_FALSE(r.has_endpoint());
    const send::tcp_config s;
    EXPECT_EQ(s.get_buffer_size(), 208u * 1024);
    EXPECT_FALSE(s.get_reconnect());
    const auto ep = recv::tcp_config().set_endpoint(":7148").get_endpoint();
    EXPECT_TRUE(ep.address().is_unspecified());
    EXPECT_EQ(ep.port(), 7148);
}

TEST(TcpConfig, TakesIPv6EndpointsAsSpead2Does)
{
    const auto r = recv::tcp_config().set_endpoint("[::1]:7148").get_endpoint();
    EXPECT_EQ(r.address(), boost::asio::ip::make_address("::1"));
    EXPECT_EQ(r.port(), 7148);
    const auto s = send::tcp_config().set_endpoint("[::1]:7149").get_endpoint();
    EXPECT_TRUE(s.address().is_v6());
    EXPECT_EQ(s.port(), 7149);
}

} // namespace
