/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// listen_config_base and dial_config_base: each field's range and message, once, for
// every connected transport's config (typed tests over tcp and rdma), and the
// defaults each transport gives.

#include "error_message.h"
#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/send_rdma.h>
#include <gnuradio/spead/send_tcp.h>
#include <gtest/gtest.h>
#include <chrono>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using spead_test::error_message;
using spead_test::expect_invalid;

// One suite for each base, over every config that derives from it.
template <typename Config>
class ListenConfig : public ::testing::Test
{
};
template <typename Config>
class DialConfig : public ::testing::Test
{
};
using listen_configs = ::testing::Types<recv::tcp_config, recv::rdma_config>;
using dial_configs = ::testing::Types<send::tcp_config, send::rdma_config>;
TYPED_TEST_SUITE(ListenConfig, listen_configs);
TYPED_TEST_SUITE(DialConfig, dial_configs);

TYPED_TEST(ListenConfig, MaxConnectionsIsOneTo1024)
{
    EXPECT_EQ(TypeParam().get_max_connections(), 1u);
    EXPECT_EQ(TypeParam().set_max_connections(1).get_max_connections(), 1u);
    EXPECT_EQ(TypeParam().set_max_connections(1024).get_max_connections(), 1024u);
    expect_invalid([] { TypeParam().set_max_connections(0); }, "max_connections");
    EXPECT_EQ(error_message<std::invalid_argument>(
                  [] { TypeParam().set_max_connections(1025); }),
              "max_connections: 1025 is out of range; use 1 to 1024 (the number of "
              "senders that may be connected at once)");
}

TYPED_TEST(ListenConfig, AllowedPeersIsAListOfAddressesAndNetworks)
{
    EXPECT_EQ(TypeParam().get_allowed_peers(), "");
    EXPECT_EQ(TypeParam().set_allowed_peers("10.0.0.0/8,::1").get_allowed_peers(),
              "10.0.0.0/8,::1");
    expect_invalid([] { TypeParam().set_allowed_peers("10.0.0.0/40"); }, "allowed_peers");
    expect_invalid([] { TypeParam().set_allowed_peers("host.example"); },
                   "allowed_peers");
}

TYPED_TEST(ListenConfig, MaxPacketSizeIs64BytesToTheTransportsLimit)
{
    EXPECT_EQ(TypeParam().get_max_packet_size(), TypeParam::default_max_packet_size);
    EXPECT_EQ(TypeParam().set_max_packet_size(64).get_max_packet_size(), 64u);
    const std::size_t max = TypeParam::max_max_packet_size;
    EXPECT_EQ(TypeParam().set_max_packet_size(max).get_max_packet_size(), max);
    EXPECT_EQ(
        error_message<std::invalid_argument>([] { TypeParam().set_max_packet_size(63); }),
        "max_packet_size: 63 bytes is out of range; use 64 to " + std::to_string(max) +
            " (at least the senders' max_packet_size)");
    expect_invalid([max] { TypeParam().set_max_packet_size(max + 1); },
                   "max_packet_size");
}

TYPED_TEST(ListenConfig, KeepListeningIsOffByDefault)
{
    EXPECT_FALSE(TypeParam().get_keep_listening());
    EXPECT_TRUE(TypeParam().set_keep_listening(true).get_keep_listening());
}

TYPED_TEST(ListenConfig, IdleTimeoutIsZeroToTenMinutes)
{
    EXPECT_EQ(TypeParam().get_idle_timeout(), 10000ms); // a bound by default (issue 38)
    EXPECT_EQ(TypeParam().set_idle_timeout(0ms).get_idle_timeout(), 0ms);
    EXPECT_EQ(TypeParam().set_idle_timeout(600000ms).get_idle_timeout(), 600000ms);
    expect_invalid([] { TypeParam().set_idle_timeout(-1ms); }, "idle_timeout");
    EXPECT_EQ(error_message<std::invalid_argument>(
                  [] { TypeParam().set_idle_timeout(600001ms); }),
              "idle_timeout: 600001 ms is out of range; use 0 to 600000 ms (10 min)");
}

TYPED_TEST(ListenConfig, SettersChainReturningTheTransportsConfig)
{
    const TypeParam c = TypeParam().set_max_connections(3).set_keep_listening(true);
    EXPECT_EQ(c.get_max_connections(), 3u);
    EXPECT_TRUE(c.get_keep_listening());
}

// What differs between the transports is the derived config's.
TEST(ListenConfig, EachTransportGivesItsOwnPacketSizes)
{
    EXPECT_EQ(recv::tcp_config().get_max_packet_size(), 65536u); // as spead2
    EXPECT_EQ(recv::tcp_config::max_max_packet_size, std::size_t(64) << 20);
    EXPECT_EQ(recv::rdma_config().get_max_packet_size(), (std::size_t(1) << 20) + 4096);
    EXPECT_EQ(recv::rdma_config::max_max_packet_size, std::size_t(1) << 30);
}

TYPED_TEST(DialConfig, ConnectTimeoutIsOneMillisecondToTenMinutes)
{
    EXPECT_EQ(TypeParam().get_connect_timeout(), 5000ms);
    EXPECT_EQ(TypeParam().set_connect_timeout(1ms).get_connect_timeout(), 1ms);
    EXPECT_EQ(TypeParam().set_connect_timeout(600000ms).get_connect_timeout(), 600000ms);
    EXPECT_EQ(error_message<std::invalid_argument>(
                  [] { TypeParam().set_connect_timeout(0ms); }),
              "connect_timeout: 0 ms is out of range; use 1 to 600000 ms (10 min)");
    expect_invalid([] { TypeParam().set_connect_timeout(600001ms); }, "connect_timeout");
}

TYPED_TEST(DialConfig, ReconnectIsOffByDefault)
{
    EXPECT_FALSE(TypeParam().get_reconnect());
    EXPECT_TRUE(TypeParam().set_reconnect(true).get_reconnect());
}

TYPED_TEST(DialConfig, ReconnectBackoffGrowsFromMinToMax)
{
    EXPECT_EQ(TypeParam().get_reconnect_min(), 100ms);
    EXPECT_EQ(TypeParam().get_reconnect_max(), 5000ms);
    const TypeParam c = TypeParam().set_reconnect_backoff(1ms, 600000ms);
    EXPECT_EQ(c.get_reconnect_min(), 1ms);
    EXPECT_EQ(c.get_reconnect_max(), 600000ms);
    expect_invalid([] { TypeParam().set_reconnect_backoff(0ms, 1s); }, "reconnect_min");
    expect_invalid([] { TypeParam().set_reconnect_backoff(1s, 600001ms); },
                   "reconnect_max");
    EXPECT_EQ(error_message<std::invalid_argument>(
                  [] { TypeParam().set_reconnect_backoff(2s, 1s); }),
              "reconnect_min: 2000 ms is above reconnect_max (1000 ms); the back-off "
              "grows from min up to max");
}

} // namespace
