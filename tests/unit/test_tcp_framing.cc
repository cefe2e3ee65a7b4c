/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The pieces of SPEAD over TCP that need no socket: the framing decoder (spead2's
// framing: packets back to back, lengths from their headers), the allowed_peers filter,
// and tcp_config validation (each bad value refused naming its parameter).

#include "byte_helpers.h"
#include "error_message.h"
#include "protocol/frame_decoder.h"
#include "streams/peer_filter.h"
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_tcp.h>
#include <gtest/gtest.h>
#include <boost/asio/ip/address.hpp>
#include <chrono>

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

TEST(PeerFilter, MatchesAddressesAndNetworks)
{
    using boost::asio::ip::make_address;
    const peer_filter f("10.0.0.0/8, 192.168.1.5,::1,fd00::/16");
    EXPECT_TRUE(f.allows(make_address("10.20.30.40")));
    EXPECT_TRUE(f.allows(make_address("192.168.1.5")));
    EXPECT_FALSE(f.allows(make_address("192.168.1.6")));
    EXPECT_FALSE(f.allows(make_address("11.0.0.1")));
    EXPECT_TRUE(f.allows(make_address("::1")));
    EXPECT_TRUE(f.allows(make_address("fd00:1::2")));
    EXPECT_FALSE(f.allows(make_address("fd01::2")));
    EXPECT_TRUE(f.allows(make_address("::ffff:10.1.2.3"))); // IPv4 on an IPv6 socket
    EXPECT_TRUE(peer_filter("").allows(make_address("1.2.3.4")));
    EXPECT_FALSE(peer_filter("127.0.0.1").allows(make_address("127.0.0.2")));
}

TEST(PeerFilter, MalformedListsAreRefused)
{
    for (const char* bad : { "10.0.0.0/33",
                             "host.example",
                             "10.0.0.1/8",
                             "1.2.3.4,,",
                             "::1/129",
                             "10.0.0.0/",
                             "10.0.0.0/x" })
        expect_invalid([bad] { peer_filter f(bad); }, "allowed_peers");
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
