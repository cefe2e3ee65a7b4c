/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// peer_filter: a listening link's allowed_peers (addresses and networks, IPv4 peers
// on IPv6 sockets matching their IPv4 entries), and malformed lists refused naming
// allowed_peers.

#include "error_message.h"
#include "transport/link/peer_filter.h"
#include <gtest/gtest.h>
#include <boost/asio/ip/address.hpp>

namespace {

using namespace gr::spead;
using spead_test::expect_invalid;

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

} // namespace
