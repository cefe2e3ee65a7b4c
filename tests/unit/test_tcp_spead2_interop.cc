/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::tcp_stream into spead2's own `spead2_recv --tcp`, and back. Needs spead2's
// tools: found at configure time (on PATH, or -DSPEAD2_RECV_PROGRAM=...
// -DSPEAD2_SEND_PROGRAM=...), or SPEAD2_BIN_DIR in the environment overrides; skipped,
// saying so, otherwise.

#include "tcp_helpers.h"
#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using namespace spead_test;

constexpr const char* skip_reason =
    "spead2's tools are not available: configure with "
    "-DSPEAD2_RECV_PROGRAM=.../spead2_recv "
    "-DSPEAD2_SEND_PROGRAM=.../spead2_send (or put them on PATH), or set SPEAD2_BIN_DIR";

/*! spead2's tools' directory: SPEAD2_BIN_DIR, else the one CMake found; or null. */
const char* spead2_bin_dir()
{
    if (const char* dir = std::getenv("SPEAD2_BIN_DIR"))
        return dir;
    return GR_SPEAD_SPEAD2_BIN_DIR[0] ? GR_SPEAD_SPEAD2_BIN_DIR : nullptr;
}

TEST(TcpSpead2Interop, TcpStreamIntoSpead2Recv)
{
    const char* dir = spead2_bin_dir();
    if (!dir)
        GTEST_SKIP() << skip_reason;
    unsigned short port = 0;
    {
        tcp_receiver probe; // a free port
        port = probe.port();
    }
    const std::string cmd = std::string(dir) +
                            "/spead2_recv --tcp 127.0.0.1:" + std::to_string(port) +
                            " 2>&1";
    FILE* out = popen(cmd.c_str(), "r");
    ASSERT_NE(out, nullptr);
    boost::asio::io_context io;
    std::unique_ptr<send::tcp_stream> tx;
    for (int i = 0; i < 100 && !tx; i++) {
        try {
            tx = std::make_unique<send::tcp_stream>(
                io,
                send::stream_config(),
                send::tcp_config().set_endpoint("127.0.0.1:" + std::to_string(port)));
        } catch (const std::system_error&) {
            std::this_thread::sleep_for(50ms); // spead2_recv is starting
        }
    }
    ASSERT_TRUE(tx);
    for (int i = 1; i <= 3; i++)
        tx->send_heap(pattern_heap(std::uint64_t(i), 5000).h, i);
    send::heap end;
    end.add_end();
    tx->send_heap(end, 4);
    tx.reset();
    std::string text;
    char buf[256];
    while (fgets(buf, sizeof(buf), out))
        text += buf;
    pclose(out);
    for (int i = 1; i <= 3; i++)
        EXPECT_NE(text.find("Received heap " + std::to_string(i) + " "),
                  std::string::npos)
            << text;
}

} // namespace

namespace {

TEST(TcpSpead2Interop, Spead2SendIntoTcpReader)
{
    const char* dir = spead2_bin_dir();
    if (!dir)
        GTEST_SKIP() << skip_reason;
    tcp_receiver rx;
    const std::string cmd = std::string(dir) +
                            "/spead2_send --tcp --heaps 20 --heap-size 100000 --verify " +
                            rx.endpoint() + " > /dev/null 2>&1";
    int status = -1;
    std::thread sender([&] { status = std::system(cmd.c_str()); }); // we pop meanwhile
    const std::size_t data_heaps = spead_test::count_data_heaps(rx.stream, 100000);
    sender.join();
    EXPECT_EQ(status, 0);
    EXPECT_EQ(data_heaps, 20u);
    const recv_stats st = rx.stream.get_stats();
    EXPECT_EQ(st[recv_stat::connections_accepted], 1u);
    EXPECT_EQ(st[recv_stat::connections_framing_errors], 0u);
    EXPECT_EQ(st[recv_stat::incomplete_heaps_evicted], 0u);
}

} // namespace
