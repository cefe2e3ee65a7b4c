/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Kernel UDP over IPv6 (as spead2): a reader on [::1] and a stream to it, sockets per
// IP version on one port, IPv4-only refusals, and send-side option errors.

#include "error_message.h"
#include "free_port.h"
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/send_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;

std::vector<std::uint8_t> payload_of(std::uint64_t cnt, std::size_t size)
{
    std::vector<std::uint8_t> out(size);
    for (std::size_t i = 0; i < size; i++)
        out[i] = std::uint8_t(cnt * 31 + i * 7);
    return out;
}

TEST(UdpIpv6, HeapsRoundTripOnIpv6Loopback)
{
    const unsigned short port = spead_test::free_udp_port();
    const std::string endpoint = "[::1]:" + std::to_string(port);
    recv::stream rs(recv::stream_config().set_queue_heaps(64));
    auto& reader =
        rs.emplace_reader<recv::udp_reader>(recv::udp_config().set_endpoints(endpoint));
    ASSERT_EQ(reader.get_bound_endpoints().size(), 1u);
    EXPECT_EQ(reader.get_bound_endpoints()[0].address().to_string(), "::1");

    boost::asio::io_context io;
    send::udp_stream ss(io,
                        send::stream_config().set_max_packet_size(1400).set_rate(1e8),
                        send::udp_config().set_endpoints(endpoint));
    constexpr std::size_t heaps = 8;
    constexpr std::size_t size = 20000; // 15 packets each
    for (std::uint64_t cnt = 1; cnt <= heaps; cnt++) {
        const std::vector<std::uint8_t> payload = payload_of(cnt, size);
        send::heap h;
        h.add_item(0x1000, payload.data(), payload.size(), false);
        ss.send_heap(h, std::int64_t(cnt));
    }
    for (std::uint64_t cnt = 1; cnt <= heaps; cnt++) {
        recv::heap h;
        ASSERT_EQ(rs.pop(h, 5s), recv::stream::pop_result::heap) << "heap " << cnt;
        EXPECT_EQ(h.cnt(), cnt);
        const auto& items = h.items();
        const auto found =
            std::find_if(items.begin(), items.end(), [](const recv::item& i) {
                return i.id == 0x1000;
            });
        ASSERT_NE(found, items.end());
        const std::vector<std::uint8_t> expected = payload_of(cnt, size);
        ASSERT_EQ(found->length, size);
        EXPECT_TRUE(std::equal(expected.begin(), expected.end(), found->data));
    }
    EXPECT_EQ(ss.get_stats()[send_stat::heaps], heaps);
}

TEST(UdpIpv6, OnePortTakesASocketPerIpVersion)
{
    const unsigned short port = spead_test::free_udp_port();
    const std::string p = std::to_string(port);
    recv::stream rs;
    auto& reader = rs.emplace_reader<recv::udp_reader>(
        recv::udp_config().set_endpoints("127.0.0.1:" + p + ",[::1]:" + p));
    std::vector<std::string> bound;
    for (const auto& ep : reader.get_bound_endpoints())
        bound.push_back(ep.address().to_string());
    std::sort(bound.begin(), bound.end());
    EXPECT_EQ(bound, (std::vector<std::string>{ "127.0.0.1", "::1" }));
}

TEST(UdpIpv6, ASenderOfMixedIpVersionsIsRefusedNamingTheFix)
{
    boost::asio::io_context io;
    spead_test::expect_error_containing<std::invalid_argument>(
        [&] {
            send::udp_stream(
                io,
                send::stream_config(),
                send::udp_config().set_endpoints("[::1]:7148,127.0.0.1:7148"));
        },
        "one stream per IP version",
        "a mixed sender");
}

TEST(UdpIpv6, AnUnknownInterfaceIsRefusedWhenSet)
{
    spead_test::expect_error_containing<std::invalid_argument>(
        [] { recv::udp_config().set_interface("no-such-if0"); },
        "interface: \"no-such-if0\" is not a local interface",
        "no-such-if0");
    EXPECT_NO_THROW(recv::udp_config().set_interface("lo"));
    EXPECT_NO_THROW(send::udp_config().set_interface("1"));
}

TEST(UdpIpv6, IbverbsStaysIpv4AndNamesTheKernelTransport)
{
    for (const char* text : { "[::1]:7148", "ff14::1:7148" }) {
        spead_test::expect_error_containing<std::invalid_argument>(
            [&] { recv::udp_ibv_config().set_endpoints(text); },
            "the ibverbs transport is IPv4 only, as spead2's. For IPv6 use the kernel "
            "UDP transport",
            text);
        spead_test::expect_error_containing<std::invalid_argument>(
            [&] { send::udp_ibv_config().set_endpoints(text); },
            "is IPv6, and this transport is IPv4 only",
            text);
    }
}

} // namespace
