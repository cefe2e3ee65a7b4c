/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead.source and spead.sink with transport ibverbs, started and stopped again and
// again in one flowgraph while host 1 sends heaps: every cycle releases what it took
// (verbs objects, file descriptors, threads). ctest also runs it under valgrind, which
// must find no definite leak and no invalid access (see CMakeLists.txt).

#include "ibv_test_support.h"
#include <gnuradio/spead/sink.h>
#include <gnuradio/spead/source.h>
#include <gnuradio/top_block.h>
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using namespace ibv_test;
using namespace std::chrono_literals;

/*! A single-packet SPEAD-64-40 heap with \p payload bytes. */
std::vector<std::uint8_t> spead_packet(std::uint64_t cnt, std::size_t payload)
{
    const std::uint64_t pointers[] = {
        (1ull << 63) | (0x01ull << 40) | cnt,
        (1ull << 63) | (0x02ull << 40) | payload,
        (1ull << 63) | (0x03ull << 40) | 0,
        (1ull << 63) | (0x04ull << 40) | payload,
        (0x1000ull << 40) | 0, // the payload item at offset 0
    };
    std::vector<std::uint8_t> packet = { 0x53, 4, 3, 5, 0, 0, 0, 5 };
    for (std::uint64_t p : pointers)
        for (int shift = 56; shift >= 0; shift -= 8)
            packet.push_back(std::uint8_t(p >> shift));
    for (std::size_t i = 0; i < payload; i++)
        packet.push_back(pattern_byte(cnt, i));
    return packet;
}

/*! Sends heaps from host 1 to host 2's \p port until stopped (at most 20 s). */
class background_sender
{
public:
    explicit background_sender(unsigned short port)
        : d_thread([this, port] { run(port); })
    {
    }
    ~background_sender()
    {
        d_stop = true;
        d_thread.join();
    }
    std::uint64_t sent() const { return d_sent; }

private:
    void run(unsigned short port)
    {
        in_host h(1);
        const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(port);
        inet_pton(AF_INET, host(2).ip.c_str(), &to.sin_addr);
        const auto deadline = std::chrono::steady_clock::now() + 20s;
        for (std::uint64_t cnt = 1;
             !d_stop && std::chrono::steady_clock::now() < deadline;
             cnt++) {
            const auto packet = spead_packet(cnt, 4096);
            if (sendto(fd,
                       packet.data(),
                       packet.size(),
                       0,
                       reinterpret_cast<const sockaddr*>(&to),
                       sizeof(to)) > 0)
                d_sent++;
            std::this_thread::sleep_for(200us);
        }
        close(fd);
    }

    std::atomic<bool> d_stop{ false };
    std::atomic<std::uint64_t> d_sent{ 0 };
    std::thread d_thread;
};

int cycles_from_environment()
{
    const char* text = std::getenv("IBV_TEST_CYCLES");
    const int n = text ? std::atoi(text) : 0;
    return n > 0 && n <= 1000 ? n : 10;
}

TEST(BlockLifecycle, IbverbsSourceAndSinkStartStopCyclesReleaseEverything)
{
    REQUIRE_TOPOLOGY();
    const int cycles = cycles_from_environment();
    const std::string ip = host(2).ip;
    const int verbs_before = live_verbs_objects(ip);
    {
        // source (ibverbs, host 2) -> sink (ibverbs, host 2 -> a multicast group)
        auto rx = gr::spead::source::make(gr::spead::source_config({
            { "transport", "ibverbs" },
            { "endpoints", ip + ":7301" },
            { "interface", "eth0" },
            { "buffer_size", 1 << 20 }, // a 1 MiB ring: quick to register
            { "item_type", "int8" },
            { "max_heap_size", 1 << 16 },
            { "stop_on_stop_heap", false },
            { "queue_heaps", 64 },
        }));
        auto tx = gr::spead::sink::make(gr::spead::sink_config({
            { "transport", "ibverbs" },
            { "endpoints", "239.77.4.1:7302" },
            { "interface", ip },
            { "max_packet_size", 8972 },
            { "item_type", "int8" },
            { "comp_vector", -1 },
        }));
        EXPECT_EQ(rx->active_transport(), "ibverbs");
        EXPECT_EQ(tx->active_transport(), "ibverbs");
        EXPECT_GT(live_verbs_objects(ip), verbs_before);
        auto tb = gr::make_top_block("ibverbs_cycles");
        tb->connect(rx, 0, tx, 0);

        background_sender sender(7301);
        std::size_t fds_after_first = 0, threads_after_first = 0;
        std::uint64_t heaps_in_last_cycle = 0;
        for (int cycle = 0; cycle < cycles; cycle++) {
            tb->start();
            ASSERT_TRUE(wait_for([&] { return tx->stats().at("data_heaps") >= 3; }, 10s))
                << "cycle " << cycle << ": no heap went through";
            heaps_in_last_cycle = tx->stats().at("data_heaps");
            tb->stop();
            tb->wait();
            // stop() closed both: only the device context (rdma_cm's) remains.
            EXPECT_EQ(live_verbs_objects(ip), verbs_before) << "cycle " << cycle;
            if (cycle == 0) {
                fds_after_first = count_open_fds();
                threads_after_first = count_threads();
            }
        }
        EXPECT_GE(heaps_in_last_cycle, 3u);
        EXPECT_TRUE(wait_for(
            [&] {
                return count_open_fds() <= fds_after_first &&
                       count_threads() <= threads_after_first;
            },
            5s))
            << count_open_fds() << " fds (" << fds_after_first << " after cycle 1), "
            << count_threads() << " threads (" << threads_after_first << ")";
        EXPECT_GT(sender.sent(), 0u);
    }
    EXPECT_EQ(live_verbs_objects(ip), verbs_before);
}

} // namespace

int main(int argc, char** argv)
{
    // The blocks open their queue pairs in start(), in the scheduler's threads, which
    // inherit the main thread's namespace: the whole process lives in host 2.
    return ibv_test::run_all_tests_in_host(argc, argv, 2);
}
