/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// One Prometheus exposer per process and address, shared by every registration that
// names the address; scraped over real HTTP on 127.0.0.1.

#include "error_message.h"
#include "http_get.h"
#include "metrics/metrics_exposer.h"
#include <gtest/gtest.h>
#include <atomic>
#include <string>

namespace {

using namespace gr::spead::metrics;
using spead_test::error_message;

std::string scrape(std::uint16_t port) { return spead_test::http_get(port); }

sampler one_stream(const std::string& name, std::uint64_t heaps)
{
    return [name, heaps] {
        stream_sample s;
        s.labels = { { "stream", name } };
        s.counters = { { "heaps", heaps } };
        return std::vector<stream_sample>{ s };
    };
}

TEST(MetricsExposer, AScrapeServesEveryRegistrationOfTheAddress)
{
    registration a = expose("127.0.0.1:0", one_stream("a", 3));
    registration b = expose("127.0.0.1:0", one_stream("b", 4));
    ASSERT_NE(a.port(), 0);
    EXPECT_EQ(a.port(), b.port()); // one exposer for the address
    const std::string text = scrape(a.port());
    EXPECT_NE(text.find("spead_recv_heaps_total{stream=\"a\"} 3"), std::string::npos)
        << text;
    EXPECT_NE(text.find("spead_recv_heaps_total{stream=\"b\"} 4"), std::string::npos)
        << text;
}

TEST(MetricsExposer, ARegistrationGoneIsNoLongerScraped)
{
    registration a = expose("127.0.0.1:0", one_stream("a", 3));
    std::atomic<int> calls{ 0 };
    auto b = std::make_unique<registration>(expose("127.0.0.1:0", [&calls] {
        calls++;
        return std::vector<stream_sample>{};
    }));
    scrape(a.port());
    EXPECT_EQ(calls.load(), 1);
    b.reset();
    EXPECT_NE(scrape(a.port()).find("stream=\"a\""), std::string::npos);
    EXPECT_EQ(calls.load(), 1);
}

TEST(MetricsExposer, TheLastRegistrationClosesThePort)
{
    std::uint16_t port;
    {
        registration a = expose("127.0.0.1:0", one_stream("a", 3));
        port = a.port();
        EXPECT_NE(scrape(port), "");
    }
    EXPECT_EQ(scrape(port), "");
}

TEST(MetricsExposer, AnAddressInUseIsARuntimeErrorSayingSo)
{
    registration a = expose("127.0.0.1:0", one_stream("a", 3));
    const std::string taken = "127.0.0.1:" + std::to_string(a.port());
    // Another process would hold it; here another address string names the same port.
    const std::string message = error_message<std::runtime_error>(
        [&] { expose("0.0.0.0:" + std::to_string(a.port()), one_stream("b", 1)); });
    EXPECT_NE(message.find("metrics: cannot listen on"), std::string::npos) << message;
    EXPECT_NE(message.find("free HOST:PORT"), std::string::npos) << message;
    (void)taken;
}

TEST(MetricsExposer, AMalformedAddressNamesTheOptionAndTheFix)
{
    for (const std::string bad : { "9148",
                                   "localhost:9148",
                                   "127.0.0.1:99999",
                                   "127.0.0.1:",
                                   "127.0.0.1:http",
                                   "[zz]:9148" }) {
        const std::string message =
            error_message<std::invalid_argument>([&] { listen_address(bad); });
        EXPECT_EQ(message.rfind("metrics: '" + bad + "'", 0), 0u) << message;
        EXPECT_NE(message.find("127.0.0.1:9148"), std::string::npos) << message;
    }
    EXPECT_EQ(listen_address(":9148"), "9148");
    EXPECT_EQ(listen_address("127.0.0.1:9148"), "127.0.0.1:9148");
    EXPECT_EQ(listen_address("[::1]:9148"), "[::1]:9148");
    EXPECT_NE(error_message<std::invalid_argument>([] {
                  listen_address("x", "--metrics");
              }).rfind("--metrics: 'x'", 0),
              std::string::npos);
}

} // namespace
