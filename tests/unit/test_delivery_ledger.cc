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

class DeliveryLedger : public ::testing::Test
{
protected:
    /*! Writes \p n packets of \p size bytes (the ledger reads sizes only). */
    void write(std::size_t n, std::size_t size)
    {
        const std::vector<send::packet> p(n, send::packet{ nullptr, 0, size, 0 });
        ledger.written(p.data(), n);
        written += n;
    }
    /*! What report() says now: packets done, and the error they carry. */
    std::pair<std::uint64_t, boost::system::error_code> report()
    {
        boost::system::error_code ec;
        const std::uint64_t done = ledger.report(ec, written);
        return { done, ec };
    }

    link::delivery_ledger ledger;
    std::uint64_t written = 0;
    const boost::system::error_code ok;
    const boost::system::error_code reset = boost::asio::error::connection_reset;
};

TEST_F(DeliveryLedger, APacketIsSentOnceAllItsBytesAreAcknowledged)
{
    write(3, 100);
    EXPECT_EQ(ledger.unsettled(), 3u);
    EXPECT_FALSE(ledger.acknowledged(300)); // nothing acknowledged
    EXPECT_TRUE(ledger.acknowledged(150));  // 150 of 300: the first packet only
    EXPECT_EQ(ledger.unsettled(), 2u);
    EXPECT_EQ(report(), std::make_pair(std::uint64_t(1), ok));
    EXPECT_TRUE(ledger.acknowledged(0));
    EXPECT_EQ(report(), std::make_pair(std::uint64_t(3), ok));
}

TEST_F(DeliveryLedger, ALossReportsTheAcknowledgedFirstThenTheRestWithItsError)
{
    write(4, 10);
    ledger.acknowledged(20); // two of four
    ledger.connection_lost(reset);
    EXPECT_EQ(ledger.unsettled(), 0u);
    EXPECT_EQ(report(), std::make_pair(std::uint64_t(2), ok)) << "acknowledged: sent";
    EXPECT_EQ(report(), std::make_pair(std::uint64_t(4), reset));
}

TEST_F(DeliveryLedger, TheNextConnectionCountsItsBytesFromZero)
{
    write(2, 1000);
    ledger.connection_lost(reset);
    EXPECT_EQ(report(), std::make_pair(std::uint64_t(2), reset));
    write(1, 1000); // on the new connection: bytes 0 to 1000
    EXPECT_TRUE(ledger.acknowledged(0));
    EXPECT_EQ(report(), std::make_pair(std::uint64_t(3), ok));
}

TEST_F(DeliveryLedger, ManyPacketsInFlightGrowTheRing)
{
    write(5000, 1);
    EXPECT_TRUE(ledger.acknowledged(1000));
    EXPECT_EQ(ledger.unsettled(), 1000u);
    EXPECT_EQ(report(), std::make_pair(std::uint64_t(4000), ok));
}

} // namespace
