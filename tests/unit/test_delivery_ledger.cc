/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// delivery_ledger: a connected writer's packets count as sent once every byte is
// acknowledged, and as lost (with the loss's error) when their connection goes first;
// reports keep packet order.

#include "transport/link/delivery_ledger.h"
#include <gtest/gtest.h>
#include <boost/asio/error.hpp>
#include <vector>

namespace {

using namespace gr::spead;

/*! \p n packets of \p size bytes (no pieces: the ledger reads sizes only). */
std::vector<send::packet> packets_of(std::size_t n, std::size_t size)
{
    return std::vector<send::packet>(n, send::packet{ nullptr, 0, size, 0 });
}

TEST(DeliveryLedger, APacketIsSentOnceAllItsBytesAreAcknowledged)
{
    link::delivery_ledger ledger;
    const auto p = packets_of(3, 100);
    ledger.written(p.data(), 3);
    EXPECT_EQ(ledger.unsettled(), 3u);
    EXPECT_FALSE(ledger.acknowledged(300)); // nothing acknowledged
    EXPECT_TRUE(ledger.acknowledged(150));  // 150 of 300: the first packet only
    EXPECT_EQ(ledger.unsettled(), 2u);
    boost::system::error_code ec;
    EXPECT_EQ(ledger.report(ec, 3), 1u);
    EXPECT_FALSE(ec);
    EXPECT_TRUE(ledger.acknowledged(0));
    EXPECT_EQ(ledger.report(ec, 3), 3u);
    EXPECT_FALSE(ec);
}

TEST(DeliveryLedger, ALossReportsTheAcknowledgedFirstThenTheRestWithItsError)
{
    link::delivery_ledger ledger;
    const auto p = packets_of(4, 10);
    ledger.written(p.data(), 4);
    ledger.acknowledged(20); // two of four
    ledger.connection_lost(boost::asio::error::connection_reset);
    EXPECT_EQ(ledger.unsettled(), 0u);
    boost::system::error_code ec;
    EXPECT_EQ(ledger.report(ec, 4), 2u);
    EXPECT_FALSE(ec) << "the acknowledged ones are sent";
    EXPECT_EQ(ledger.report(ec, 4), 4u);
    EXPECT_EQ(ec, boost::asio::error::connection_reset);
}

TEST(DeliveryLedger, TheNextConnectionCountsItsBytesFromZero)
{
    link::delivery_ledger ledger;
    const auto p = packets_of(2, 1000);
    ledger.written(p.data(), 2);
    ledger.connection_lost(boost::asio::error::connection_reset);
    boost::system::error_code ec;
    EXPECT_EQ(ledger.report(ec, 2), 2u);
    ec.clear();
    ledger.written(p.data(), 1); // on the new connection: bytes 0 to 1000
    EXPECT_TRUE(ledger.acknowledged(0));
    EXPECT_EQ(ledger.report(ec, 3), 3u);
    EXPECT_FALSE(ec);
}

TEST(DeliveryLedger, ManyPacketsInFlightGrowTheRing)
{
    link::delivery_ledger ledger;
    const auto p = packets_of(5000, 1);
    ledger.written(p.data(), 5000);
    EXPECT_TRUE(ledger.acknowledged(1000));
    EXPECT_EQ(ledger.unsettled(), 1000u);
    boost::system::error_code ec;
    EXPECT_EQ(ledger.report(ec, 5000), 4000u);
}

} // namespace
