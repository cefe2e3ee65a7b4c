/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// SPEAD over TCP on 127.0.0.1, working as it should: every item type round trips,
// heaps of 1 B to 64 MiB, eight senders into one reader, and a slow consumer slowing
// the sender (back-pressure) with nothing lost: heaps sent = heaps received.

#include "tcp_helpers.h"
#include <gnuradio/spead/descriptor.h>
#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <map>
#include <memory>
#include <thread>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using namespace spead_test;

send::tcp_config to(const tcp_receiver& r)
{
    return send::tcp_config().set_endpoint(r.endpoint());
}

/*! Heaps popped until the stream stops (or \p limit passes without one). */
std::vector<recv::heap> drain(recv::stream& s, std::chrono::milliseconds limit = 10s)
{
    std::vector<recv::heap> out;
    for (;;) {
        recv::heap h;
        const auto r = s.pop(h, limit);
        if (r != recv::stream::pop_result::heap)
            break;
        out.push_back(std::move(h));
    }
    return out;
}

TEST(TcpLink, EveryItemTypeRoundTrips)
{
    tcp_receiver rx;
    boost::asio::io_context io;
    {
        send::tcp_stream tx(io, send::stream_config(), to(rx));
        EXPECT_TRUE(tx.is_connected());
        send::heap h;
        descriptor d;
        d.id = 0x1001;
        d.name = "adc";
        d.description = "samples";
        d.shape = { 4 };
        d.format = { { 'i', 8 } };
        h.add_descriptor(d);
        h.add_immediate(0x1600, 0x123456789aULL);
        std::vector<std::uint8_t> addressed(3000);
        for (std::size_t i = 0; i < addressed.size(); i++)
            addressed[i] = std::uint8_t(i * 13);
        h.add_item(0x1001, addressed.data(), addressed.size(), false);
        h.add_item(0x1002, std::vector<std::uint8_t>{ 1, 2, 3 }, true); // small: inline
        tx.send_heap(h);
        send::heap end;
        end.add_end();
        tx.send_heap(end);
        EXPECT_EQ(tx.get_stats()[send_stat::heaps], 2u);
    }
    const auto heaps = drain(rx.stream);
    ASSERT_EQ(heaps.size(), 1u); // the stop heap ends the stream
    std::map<std::uint64_t, const recv::item*> by_id;
    for (const auto& it : heaps[0].items())
        by_id[it.id] = &it;
    ASSERT_TRUE(by_id.count(0x1600));
    EXPECT_EQ(by_id[0x1600]->immediate_value, 0x123456789aULL);
    ASSERT_TRUE(by_id.count(0x1001));
    ASSERT_EQ(by_id[0x1001]->length, 3000u);
    for (std::size_t i = 0; i < 3000; i++)
        ASSERT_EQ(by_id[0x1001]->data[i], std::uint8_t(i * 13));
    ASSERT_TRUE(by_id.count(0x1002));
    const auto ds = heaps[0].descriptors();
    ASSERT_EQ(ds.size(), 1u);
    EXPECT_EQ(ds[0].name, "adc");
    const recv_stats st = rx.stream.get_stats();
    EXPECT_EQ(st[recv_stat::connections_accepted], 1u);
    EXPECT_EQ(st[recv_stat::stop_heaps], 1u);
}

TEST(TcpLink, HeapsOfOneByteTo64MiB)
{
    const std::vector<std::size_t> sizes = { 1, 7, 1000, 65536, 1 << 20, 64 << 20 };
    tcp_receiver rx(recv::tcp_config(),
                    recv::stream_config().set_max_heap_size(65 << 20));
    boost::asio::io_context io;
    std::thread sender([&] {
        send::tcp_stream tx(io, send::stream_config().set_max_packet_size(65504), to(rx));
        for (std::size_t i = 0; i < sizes.size(); i++)
            tx.send_heap(pattern_heap(i + 1, sizes[i]).h, std::int64_t(i + 1));
    });
    const auto heaps = drain(rx.stream, 30s);
    sender.join();
    ASSERT_EQ(heaps.size(), sizes.size());
    for (std::size_t i = 0; i < sizes.size(); i++) {
        EXPECT_EQ(heaps[i].cnt(), i + 1);
        EXPECT_TRUE(has_pattern(heaps[i], i + 1, sizes[i])) << sizes[i];
    }
    const recv_stats st = rx.stream.get_stats();
    EXPECT_EQ(st[recv_stat::connections_closed], 1u); // the sender's end ended the stream
    EXPECT_EQ(st[recv_stat::heaps], sizes.size());
}

/*! Heap payload size of sender \p s: how the receiver tells the senders apart. */
std::size_t sender_heap_size(int s) { return 20000 + 1000 * std::size_t(s); }

// Each connection is a SPEAD sender with its own heap cnts: eight senders with the
// SAME cnt sequence, at the default max_heaps, deliver every heap, each sender's in
// order. (With one assembly for all, their heaps would collide and be evicted.)
TEST(TcpLink, EightSendersWithTheSameCntsIntoOneReader)
{
    constexpr int senders = 8;
    constexpr int per_sender = 60;
    tcp_receiver rx(
        recv::tcp_config().set_max_connections(senders).set_keep_listening(true));
    boost::asio::io_context io;
    std::vector<std::thread> threads;
    std::atomic<int> sent{ 0 };
    for (int s = 0; s < senders; s++)
        threads.emplace_back([&, s] {
            send::tcp_stream tx(io, send::stream_config(), to(rx));
            for (int i = 1; i <= per_sender; i++) {
                tx.send_heap(pattern_heap(std::uint64_t(i), sender_heap_size(s)).h);
                sent++;
            }
        });
    std::map<std::size_t, std::uint64_t> last_cnt; // per sender (heap size): in order
    int received = 0;
    while (received < senders * per_sender) {
        recv::heap h;
        if (rx.stream.pop(h, 10s) != recv::stream::pop_result::heap) {
            for (const auto& kv : rx.stream.get_stats().items())
                if (kv.second)
                    ADD_FAILURE() << kv.first << " " << kv.second;
            break;
        }
        std::size_t size = 0;
        for (const auto& it : h.items())
            if (it.id == tcp_payload_id)
                size = it.length;
        EXPECT_TRUE(has_pattern(h, h.cnt(), size)) << h.cnt();
        EXPECT_EQ(h.cnt(), last_cnt[size] + 1) << "sender of " << size << " B heaps";
        last_cnt[size] = h.cnt();
        received++;
    }
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(sent.load(), received);
    for (int s = 0; s < senders; s++)
        EXPECT_EQ(last_cnt[sender_heap_size(s)], std::uint64_t(per_sender)) << s;
    EXPECT_TRUE(eventually([&] { return rx.reader.get_num_connections() == 0; }));
    rx.stream.stop();
    const recv_stats st = rx.stream.get_stats();
    EXPECT_EQ(st[recv_stat::connections_accepted], std::uint64_t(senders));
    EXPECT_EQ(st[recv_stat::connections_closed], std::uint64_t(senders));
    EXPECT_EQ(st[recv_stat::connections_refused], 0u);
    EXPECT_EQ(st[recv_stat::heaps], std::uint64_t(senders * per_sender));
    EXPECT_EQ(st[recv_stat::incomplete_heaps_evicted] +
                  st[recv_stat::incomplete_heaps_flushed],
              0u);
}

// Senders that come one after another, each numbering its heaps from 1 (a restarted
// process): each new connection starts afresh, its heaps not taken for duplicates.
TEST(TcpLink, ANewConnectionReusingCntsStartsAfresh)
{
    tcp_receiver rx(recv::tcp_config().set_keep_listening(true));
    boost::asio::io_context io;
    for (int round = 0; round < 3; round++) {
        {
            send::tcp_stream tx(io, send::stream_config(), to(rx));
            for (std::uint64_t cnt = 1; cnt <= 5; cnt++)
                tx.send_heap(pattern_heap(cnt, 30000).h);
        }
        for (std::uint64_t cnt = 1; cnt <= 5; cnt++) {
            recv::heap h;
            ASSERT_EQ(rx.stream.pop(h, 10s), recv::stream::pop_result::heap) << round;
            EXPECT_EQ(h.cnt(), cnt);
            EXPECT_TRUE(has_pattern(h, cnt, 30000));
        }
        // max_connections 1: the next sender comes at once, before the reader may have
        // seen this one go (it waits for the slot)
    }
    rx.stream.stop();
    EXPECT_EQ(rx.stream.get_stats()[recv_stat::heaps], 15u);
}

TEST(TcpLink, SlowConsumerSlowsTheSenderAndNothingIsLost)
{
    // 19.7 MB: more than the kernel's socket buffers on both ends can hold (at most
    // 6 + 4 MiB by default), so a consumer that takes nothing stops the sender.
    constexpr int count = 150;
    constexpr std::size_t size = 128 * 1024;
    tcp_receiver rx(recv::tcp_config(), recv::stream_config().set_queue_heaps(2));
    boost::asio::io_context io;
    send_stats tx_stats;
    std::atomic<send::tcp_stream*> live{ nullptr };
    std::thread sender([&] {
        // All queued at once: send_heap() returns once the receiver acknowledged the
        // heap, so one heap at a time would never fill the socket.
        std::vector<std::unique_ptr<pattern_heap>> heaps;
        send::tcp_stream tx(io,
                            send::stream_config()
                                .set_max_packet_size(9000)
                                .set_max_heaps(count)
                                .set_inline_completions(true),
                            to(rx));
        live.store(&tx);
        for (int i = 0; i < count; i++) {
            heaps.push_back(std::make_unique<pattern_heap>(i + 1, size));
            EXPECT_TRUE(tx.async_send_heap(
                heaps.back()->h,
                [](const boost::system::error_code& ec, std::size_t) {
                    EXPECT_FALSE(ec);
                },
                i + 1));
        }
        tx.flush();
        tx_stats = tx.get_stats();
    });
    // The consumer takes nothing until the sender waits for room (however slow a
    // busy or instrumented machine makes the sender), then is slower than it.
    const auto blocked = [&live] {
        const send::tcp_stream* tx = live.load();
        return tx && tx->get_stats()[send_stat::send_wait_us] > 0;
    };
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!blocked() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(blocked()) << "the sender never waited for room in 30 s";
    int received = 0;
    for (;;) {
        recv::heap h;
        if (rx.stream.pop(h, 10s) != recv::stream::pop_result::heap)
            break;
        EXPECT_EQ(h.cnt(), std::uint64_t(received + 1));
        EXPECT_TRUE(has_pattern(h, h.cnt(), size));
        received++;
        std::this_thread::sleep_for(2ms); // slower than the sender
    }
    sender.join();
    EXPECT_EQ(received, count);
    EXPECT_EQ(tx_stats[send_stat::heaps], std::uint64_t(count));
    const recv_stats st = rx.stream.get_stats();
    EXPECT_EQ(st[recv_stat::heaps_dropped_queue_full], 0u);
    EXPECT_EQ(st[recv_stat::incomplete_heaps_evicted], 0u);
    EXPECT_GT(st[recv_stat::receive_waits], 0u);
    EXPECT_GT(tx_stats[send_stat::send_waits], 0u);
    EXPECT_GT(tx_stats[send_stat::send_wait_us], 0u);
}

} // namespace
