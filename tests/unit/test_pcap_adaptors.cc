/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::pcap_reader and send::pcap_stream: replaying spead2's reference captures into
// a stream, and recording heaps to a capture that replays bit for bit.

#include "error_message.h"
#include "temp_file.h"
#include <gnuradio/spead/recv_pcap.h>
#include <gnuradio/spead/send_pcap.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <boost/asio/io_context.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;

const std::string vectors = GR_SPEAD_VECTORS_DIR;

/*! Pops until the stream reports it has ended (at most 200 pops of 50 ms). */
std::vector<recv::heap> drain_until_stopped(recv::stream& s, bool& stopped)
{
    std::vector<recv::heap> out;
    stopped = false;
    for (int i = 0; i < 200 && !stopped; i++) {
        recv::heap h;
        switch (s.pop(h, 50ms)) {
        case recv::stream::pop_result::heap:
            out.push_back(std::move(h));
            break;
        case recv::stream::pop_result::stopped:
            stopped = true;
            break;
        case recv::stream::pop_result::timeout:
            break;
        }
    }
    return out;
}

std::vector<std::uint64_t> data_heap_cnts(const std::vector<recv::heap>& heaps)
{
    std::vector<std::uint64_t> out;
    for (const auto& h : heaps)
        if (!h.is_stop())
            out.push_back(h.cnt());
    return out;
}

using spead_test::temp_file;

TEST(PcapReader, ReplaysACaptureAndEndsTheStream)
{
    recv::stream s(recv::stream_config().set_queue_heaps(16));
    auto& r = s.emplace_reader<recv::pcap_reader>(vectors +
                                                  "/spead64-40_multipacket_1472.pcap");
    bool stopped = false;
    const auto heaps = drain_until_stopped(s, stopped);
    EXPECT_TRUE(stopped);
    EXPECT_EQ(data_heap_cnts(heaps), (std::vector<std::uint64_t>{ 1, 2, 3 }));
    for (const auto& h : heaps)
        EXPECT_TRUE(h.is_complete());
    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::packets], 37u);
    EXPECT_EQ(stats[recv_stat::frames_filtered], 0u);
    EXPECT_EQ(r.get_datagrams_replayed(), 37u);
}

TEST(PcapReader, PortFilterCountsTheOtherPortsFrames)
{
    recv::stream s(recv::stream_config().set_queue_heaps(16));
    s.emplace_reader<recv::pcap_reader>(vectors + "/spead64-40_two_substreams.pcap",
                                        7162);
    bool stopped = false;
    const auto heaps = drain_until_stopped(s, stopped);
    EXPECT_TRUE(stopped);
    EXPECT_EQ(data_heap_cnts(heaps), (std::vector<std::uint64_t>{ 1, 3 }));
    const recv_stats stats = s.get_stats();
    // port 7163's 4 + 3 data packets; its stop packet follows 7162's stop in the file,
    // where the replay ends, so it is never read
    EXPECT_EQ(stats[recv_stat::frames_filtered], 7u);
    EXPECT_EQ(stats[recv_stat::packets], 8u);
}

TEST(PcapReader, EndOfFileEndsTheStreamWithoutAStopHeap)
{
    // Both ports replayed with stop_on_stop_heap off: the end of the file ends it.
    recv::stream s(
        recv::stream_config().set_queue_heaps(16).set_stop_on_stop_heap(false));
    s.emplace_reader<recv::pcap_reader>(vectors + "/spead64-40_two_substreams.pcap");
    bool stopped = false;
    const auto heaps = drain_until_stopped(s, stopped);
    EXPECT_TRUE(stopped);
    EXPECT_EQ(data_heap_cnts(heaps), (std::vector<std::uint64_t>{ 1, 2, 3, 4 }));
    EXPECT_EQ(s.get_stats()[recv_stat::packets], 16u);
}

TEST(PcapReader, MissingFileIsReportedByName)
{
    recv::stream s;
    spead_test::expect_error_containing<std::runtime_error>(
        [&] { s.emplace_reader<recv::pcap_reader>("/nonexistent/capture.pcap"); },
        "/nonexistent/capture.pcap",
        "a missing file");
}

TEST(PcapStream, BadDestinationsAreRefused)
{
    boost::asio::io_context io;
    temp_file file("bad_destinations");
    EXPECT_THROW(send::pcap_stream(io, send::stream_config(), file.path, ":7148"),
                 std::invalid_argument);
    EXPECT_THROW(send::pcap_stream(io,
                                   send::stream_config(),
                                   file.path,
                                   std::vector<boost::asio::ip::udp::endpoint>()),
                 std::invalid_argument);
}

TEST(PcapStream, RecordedHeapsReplayBitForBit)
{
    temp_file file("round_trip");
    std::vector<std::vector<std::uint8_t>> payloads;
    for (int i = 0; i < 6; i++) {
        std::vector<std::uint8_t> p(5000 + 1000 * i);
        for (std::size_t j = 0; j < p.size(); j++)
            p[j] = std::uint8_t(i * 31 + j * 3);
        payloads.push_back(std::move(p));
    }
    send_stats sent;
    {
        boost::asio::io_context io;
        send::pcap_stream ps(io,
                             send::stream_config().set_max_packet_size(1472),
                             file.path,
                             "239.1.2.3:7148,127.0.0.1:7149");
        EXPECT_EQ(ps.get_num_substreams(), 2u);
        for (int i = 0; i < 6; i++) {
            send::heap h;
            h.add_item(0x1000, payloads[i].data(), payloads[i].size(), false);
            ps.send_heap(h, i + 1, i % 2);
        }
        sent = ps.get_stats();
    }
    EXPECT_EQ(sent[send_stat::heaps], 6u);

    recv::stream s(recv::stream_config().set_queue_heaps(16));
    s.emplace_reader<recv::pcap_reader>(file.path, 7148);
    bool stopped = false;
    const auto heaps = drain_until_stopped(s, stopped);
    EXPECT_TRUE(stopped);
    ASSERT_EQ(data_heap_cnts(heaps), (std::vector<std::uint64_t>{ 1, 3, 5 }));
    for (const auto& h : heaps) {
        const recv::item* it = h.find(0x1000);
        ASSERT_NE(it, nullptr);
        const auto& expected = payloads[h.cnt() - 1];
        ASSERT_EQ(it->length, expected.size());
        EXPECT_TRUE(std::equal(expected.begin(), expected.end(), it->data)) << h.cnt();
    }
    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::packets] + stats[recv_stat::frames_filtered],
              sent[send_stat::packets]);
}

TEST(PcapReader, ReplayWaitsForASlowConsumerInsteadOfDroppingHeaps)
{
    temp_file file("slow_consumer");
    std::vector<std::uint8_t> payload(20000, 0x5a);
    constexpr int n_heaps = 40;
    {
        boost::asio::io_context io;
        send::pcap_stream ps(io,
                             send::stream_config().set_max_packet_size(1472),
                             file.path,
                             "127.0.0.1:7148");
        for (int i = 0; i < n_heaps; i++) {
            send::heap h;
            h.add_item(0x1000, payload.data(), payload.size(), false);
            ps.send_heap(h, i + 1);
        }
    }
    // A queue of two heaps and a consumer far slower than the replay.
    recv::stream s(recv::stream_config().set_queue_heaps(2));
    s.emplace_reader<recv::pcap_reader>(file.path);
    std::vector<std::uint64_t> cnts;
    for (int i = 0; i < 400 && cnts.size() < std::size_t(n_heaps); i++) {
        std::this_thread::sleep_for(2ms);
        recv::heap h;
        if (s.pop(h, 50ms) == recv::stream::pop_result::heap)
            cnts.push_back(h.cnt());
    }
    ASSERT_EQ(cnts.size(), std::size_t(n_heaps));
    for (int i = 0; i < n_heaps; i++)
        EXPECT_EQ(cnts[i], std::uint64_t(i + 1));
    EXPECT_EQ(s.get_stats()[recv_stat::heaps_dropped_queue_full], 0u);
}

TEST(PcapReader, StopReturnsPromptlyWhileReplayWaitsForTheConsumer)
{
    recv::stream s(recv::stream_config().set_queue_heaps(1));
    s.emplace_reader<recv::pcap_reader>(vectors + "/spead64-40_multipacket_1472.pcap");
    std::this_thread::sleep_for(50ms); // the queue fills; the reader waits
    const auto start = std::chrono::steady_clock::now();
    s.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

} // namespace
