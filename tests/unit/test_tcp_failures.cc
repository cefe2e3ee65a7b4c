/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// SPEAD over TCP when things go wrong: refused, never-accepting and vanished peers,
// reconnection, admission (allowed_peers, max_connections), hostile input against a
// live reader with a good sender unharmed, stop during a stalled connect, and 100
// connect/disconnect cycles with fds, threads and memory flat. Each failure is counted
// and its message names the cause.

#include "byte_helpers.h"
#include "error_message.h"
#include "log_capture.h"
#include "sanitizers.h"
#include "tcp_helpers.h"
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <system_error>
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <iostream>
#include <thread>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using namespace spead_test;
using gr::spead::file_descriptor;
using steady = std::chrono::steady_clock;

send::tcp_config to(unsigned short port)
{
    return send::tcp_config().set_endpoint("127.0.0.1:" + std::to_string(port));
}

/*! A listening socket whose accept queue is full: further connections stall. */
struct never_accepting {
    never_accepting() : fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0))
    {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
        EXPECT_EQ(listen(fd.get(), 0), 0);
        socklen_t len = sizeof(addr);
        getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
        port = ntohs(addr.sin_port);
        // Fill the queue (backlog 0 holds one): these complete, later ones stall.
        for (int i = 0; i < 2; i++) {
            file_descriptor c(
                socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
            connect(c.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
            fillers.push_back(std::move(c));
        }
        std::this_thread::sleep_for(50ms);
    }
    file_descriptor fd;
    std::vector<file_descriptor> fillers;
    unsigned short port = 0;
};

/*! A port nobody listens on. */
unsigned short closed_port()
{
    tcp_receiver rx;
    return rx.port(); // closed again when rx goes
}

recv_stats stopped_stats(tcp_receiver& rx)
{
    rx.stream.stop();
    return rx.stream.get_stats();
}

/*! Every connection accepted ended in exactly one counter. */
void expect_connections_reconcile(const recv_stats& st)
{
    EXPECT_EQ(st[recv_stat::connections_accepted],
              st[recv_stat::connections_closed] + st[recv_stat::connections_lost] +
                  st[recv_stat::connections_framing_errors] +
                  st[recv_stat::connections_frame_too_large] +
                  st[recv_stat::connections_partial_frame] +
                  st[recv_stat::connections_idle_timeout] +
                  st[recv_stat::connections_stopped]);
}

TEST(TcpFailures, ConnectionRefusedThrowsNamingTheFix)
{
    const unsigned short port = closed_port();
    boost::asio::io_context io;
    const std::string message = expect_error<std::system_error>(
        [&] { send::tcp_stream tx(io, send::stream_config(), to(port)); },
        "a connection to a closed port");
    EXPECT_NE(message.find("127.0.0.1:" + std::to_string(port)), std::string::npos)
        << message;
    EXPECT_NE(message.find("start the receiver"), std::string::npos) << message;
}

TEST(TcpFailures, PeerNeverAcceptingTimesOut)
{
    never_accepting peer;
    boost::asio::io_context io;
    const auto start = steady::now();
    const std::string message = expect_error<std::system_error>(
        [&] {
            send::tcp_stream tx(
                io, send::stream_config(), to(peer.port).set_connect_timeout(300ms));
        },
        "a connection nobody accepts");
    EXPECT_LT(steady::now() - start, 3s);
    EXPECT_NE(message.find("connect_timeout"), std::string::npos) << message;
}

TEST(TcpFailures, StopDuringStalledConnectDoesNotHang)
{
    never_accepting peer;
    boost::asio::io_context io;
    std::atomic<bool> handled{ false };
    boost::system::error_code handled_ec;
    const auto start = steady::now();
    {
        pattern_heap ph(1, 100); // outlives the stream, which reads it until its end
        send::tcp_stream tx(io,
                            send::stream_config(),
                            to(peer.port).set_reconnect(true).set_connect_timeout(60s));
        tx.async_send_heap(ph.h, [&](const boost::system::error_code& ec, std::size_t) {
            handled_ec = ec;
            handled = true;
        });
        std::this_thread::sleep_for(200ms); // the writer is now in connect()
    }                                       // destroyed mid-connect
    EXPECT_LT(steady::now() - start, 3s);
    io.run();
    EXPECT_TRUE(handled.load());
    EXPECT_TRUE(handled_ec);
}

TEST(TcpFailures, ReceiverGoneFailsTheSenderCountingIt)
{
    auto rx = std::make_unique<tcp_receiver>();
    boost::asio::io_context io;
    send::tcp_stream tx(
        io, send::stream_config().set_max_packet_size(9000), to(rx->port()));
    tx.send_heap(pattern_heap(1, 1000).h);
    rx.reset(); // the receiver's process "dies": its sockets close
    bool failed = false;
    const auto start = steady::now();
    for (int i = 2; i < 1000 && !failed; i++) {
        try {
            tx.send_heap(pattern_heap(std::uint64_t(i), 100000).h);
        } catch (const boost::system::system_error&) {
            failed = true;
        }
    }
    EXPECT_TRUE(failed);
    EXPECT_LT(steady::now() - start, 5s);
    const send_stats st = tx.get_stats();
    EXPECT_EQ(st[send_stat::connections_lost], 1u);
    EXPECT_GE(st[send_stat::heaps_failed], 1u);
    EXPECT_FALSE(tx.is_connected());
    // Without reconnect, later heaps fail at once.
    EXPECT_THROW(tx.send_heap(pattern_heap(5000, 10).h), boost::system::system_error);
}

TEST(TcpFailures, SenderReconnectsWithBackOff)
{
    auto rx = std::make_unique<tcp_receiver>(recv::tcp_config().set_keep_listening(true));
    const unsigned short port = rx->port();
    boost::asio::io_context io;
    send::tcp_stream tx(io,
                        send::stream_config().set_max_packet_size(9000),
                        to(port).set_reconnect(true).set_reconnect_backoff(20ms, 200ms));
    tx.send_heap(pattern_heap(1, 1000).h, 1);
    recv::heap h;
    ASSERT_EQ(rx->stream.pop(h, 5s), recv::stream::pop_result::heap);
    rx.reset();
    // Heaps fail until the sender notices; then it reconnects to the new receiver.
    for (int i = 0; i < 1000 && tx.get_stats()[send_stat::connections_lost] == 0; i++) {
        try {
            tx.send_heap(pattern_heap(2, 100000).h, 2);
        } catch (const boost::system::system_error&) {
        }
    }
    ASSERT_EQ(tx.get_stats()[send_stat::connections_lost], 1u);
    recv::stream rs;
    auto& reader = rs.emplace_reader<recv::tcp_reader>(
        recv::tcp_config().set_endpoint(boost::asio::ip::tcp::endpoint(
            boost::asio::ip::make_address("127.0.0.1"), port)));
    EXPECT_EQ(reader.get_bound_endpoint().port(), port);
    tx.send_heap(pattern_heap(3, 1000).h, 3);
    ASSERT_EQ(rs.pop(h, 5s), recv::stream::pop_result::heap);
    EXPECT_EQ(h.cnt(), 3u);
    EXPECT_TRUE(has_pattern(h, 3, 1000));
    EXPECT_EQ(tx.get_stats()[send_stat::connections_established], 2u);
}

TEST(TcpFailures, ReconnectingSenderConnectsInTheBackgroundBeforeAnyHeap)
{
    // A producer (spead.sink's work()) waits on is_connected() before it queues: the
    // connection must come up without a heap queued, once the receiver is there.
    const unsigned short port = closed_port();
    boost::asio::io_context io;
    send::tcp_stream tx(io,
                        send::stream_config(),
                        to(port).set_reconnect(true).set_reconnect_backoff(20ms, 100ms));
    std::this_thread::sleep_for(300ms); // nobody listens: attempts fail and back off
    EXPECT_FALSE(tx.is_connected());
    EXPECT_GT(tx.get_stats()[send_stat::connect_failures], 1u);
    recv::stream rs;
    rs.emplace_reader<recv::tcp_reader>(
        recv::tcp_config().set_endpoint(boost::asio::ip::tcp::endpoint(
            boost::asio::ip::make_address("127.0.0.1"), port)));
    EXPECT_TRUE(eventually([&] { return tx.is_connected(); }));
    EXPECT_EQ(tx.get_stats()[send_stat::connections_established], 1u);
    tx.send_heap(pattern_heap(7, 1000).h, 7);
    recv::heap h;
    ASSERT_EQ(rs.pop(h, 5s), recv::stream::pop_result::heap);
    EXPECT_TRUE(has_pattern(h, 7, 1000));
}

TEST(TcpFailures, AllowedPeersRefusesOthersCountedAndLoggedOnce)
{
    auto& log = *capture_sink::instance();
    tcp_receiver rx(
        recv::tcp_config().set_allowed_peers("10.0.0.0/8").set_keep_listening(true));
    for (int i = 0; i < 3; i++)
        file_descriptor c = raw_connect(rx.port());
    EXPECT_TRUE(eventually(
        [&] { return rx.stream.get_stats()[recv_stat::connections_refused] == 3; }));
    const std::string text = log.text();
    const auto first = text.find("not in allowed_peers");
    EXPECT_NE(first, std::string::npos);
    EXPECT_EQ(text.find("not in allowed_peers", first + 1), std::string::npos);
    EXPECT_EQ(rx.stream.get_stats()[recv_stat::connections_accepted], 0u);
}

TEST(TcpFailures, ConnectionBeyondMaxConnectionsIsRefused)
{
    tcp_receiver rx(recv::tcp_config().set_max_connections(1).set_keep_listening(true));
    boost::asio::io_context io;
    send::tcp_stream first(io, send::stream_config(), to(rx.port()));
    ASSERT_TRUE(eventually([&] { return rx.reader.get_num_connections() == 1; }));
    file_descriptor second = raw_connect(rx.port());
    EXPECT_TRUE(eventually(
        [&] { return rx.stream.get_stats()[recv_stat::connections_refused] == 1; }));
    first.send_heap(pattern_heap(1, 5000).h, 1); // the first is unharmed
    recv::heap h;
    ASSERT_EQ(rx.stream.pop(h, 5s), recv::stream::pop_result::heap);
    EXPECT_TRUE(has_pattern(h, 1, 5000));
}

// A sender that comes while every slot is taken waits about a second for one to free
// before it is refused: one that closes and reconnects at once is not refused because
// its old connection's end had not yet been seen.
TEST(TcpFailures, SenderThatComesWhileFullIsAdmittedWhenASlotFrees)
{
    tcp_receiver rx(recv::tcp_config().set_max_connections(1).set_keep_listening(true));
    boost::asio::io_context io;
    auto first =
        std::make_unique<send::tcp_stream>(io, send::stream_config(), to(rx.port()));
    ASSERT_TRUE(eventually([&] { return rx.reader.get_num_connections() == 1; }));
    send::tcp_stream second(
        io, send::stream_config(), to(rx.port())); // the kernel's backlog
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(rx.stream.get_stats()[recv_stat::connections_refused], 0u);
    first.reset();
    second.send_heap(pattern_heap(2, 5000).h, 2);
    recv::heap h;
    ASSERT_EQ(rx.stream.pop(h, 5s), recv::stream::pop_result::heap);
    EXPECT_TRUE(has_pattern(h, 2, 5000));
    const recv_stats st = rx.stream.get_stats();
    EXPECT_EQ(st[recv_stat::connections_refused], 0u);
    EXPECT_EQ(st[recv_stat::connections_accepted], 2u);
}

TEST(TcpFailures, HostileInputEndsOnlyItsConnection)
{
    tcp_receiver rx(recv::tcp_config()
                        .set_max_connections(8)
                        .set_keep_listening(true)
                        .set_max_packet_size(16384));
    boost::asio::io_context io;
    send::tcp_stream good(
        io, send::stream_config().set_max_packet_size(9000), to(rx.port()));
    file_descriptor silent = raw_connect(rx.port()); // connects, sends nothing
    {
        file_descriptor garbage = raw_connect(rx.port());
        raw_send(garbage.get(), std::vector<std::uint8_t>(64, 'G'));
        file_descriptor huge = raw_connect(rx.port());
        // Header + 4 pointers declaring a 1 GiB payload.
        raw_send(huge.get(),
                 from_hex("53 04 03 05 00 00 00 04"
                          "80 00 01 00 00 00 00 01"
                          "80 00 02 00 40 00 00 00"
                          "80 00 03 00 00 00 00 00"
                          "80 00 04 00 40 00 00 00"));
        file_descriptor half = raw_connect(rx.port());
        auto p = packetise(pattern_heap(9, 500).h, 9, 9000).front();
        p.resize(p.size() / 2);
        raw_send(half.get(), p);
        EXPECT_TRUE(eventually([&] {
            const recv_stats st = rx.stream.get_stats();
            return st[recv_stat::connections_framing_errors] == 1 &&
                   st[recv_stat::connections_frame_too_large] == 1;
        }));
    } // half closes mid-packet
    for (int i = 1; i <= 20; i++)
        good.send_heap(pattern_heap(std::uint64_t(i), 30000).h, i);
    for (int i = 1; i <= 20; i++) {
        recv::heap h;
        ASSERT_EQ(rx.stream.pop(h, 5s), recv::stream::pop_result::heap);
        EXPECT_EQ(h.cnt(), std::uint64_t(i));
        EXPECT_TRUE(has_pattern(h, h.cnt(), 30000));
    }
    EXPECT_TRUE(eventually([&] {
        return rx.stream.get_stats()[recv_stat::connections_partial_frame] == 1;
    }));
    const recv_stats st = stopped_stats(rx);
    EXPECT_EQ(st[recv_stat::connections_accepted], 5u);
    EXPECT_EQ(st[recv_stat::connections_stopped], 2u); // good and silent
    expect_connections_reconcile(st);
}

TEST(TcpFailures, IdleTimeoutFreesTheSlot)
{
    tcp_receiver rx(recv::tcp_config().set_idle_timeout(300ms).set_keep_listening(true));
    file_descriptor silent = raw_connect(rx.port());
    EXPECT_TRUE(eventually(
        [&] { return rx.stream.get_stats()[recv_stat::connections_idle_timeout] == 1; }));
    boost::asio::io_context io;
    send::tcp_stream good(io, send::stream_config(), to(rx.port()));
    good.send_heap(pattern_heap(1, 100).h, 1);
    recv::heap h;
    EXPECT_EQ(rx.stream.pop(h, 5s), recv::stream::pop_result::heap);
}

TEST(TcpFailures, PeerResetIsCountedLost)
{
    tcp_receiver rx;
    {
        file_descriptor c = raw_connect(rx.port());
        ASSERT_TRUE(eventually([&] { return rx.reader.get_num_connections() == 1; }));
        linger l{ 1, 0 }; // close with RST: a killed peer's kernel does the same
        setsockopt(c.get(), SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    }
    recv::heap h;
    EXPECT_EQ(rx.stream.pop(h, 5s), recv::stream::pop_result::stopped);
    const recv_stats st = rx.stream.get_stats();
    EXPECT_EQ(st[recv_stat::connections_lost], 1u);
    expect_connections_reconcile(st);
}

/*! A listening socket on loopback with a small receive buffer, whose one accepted
 * connection the test reads (or not) itself: a receiver that stops reading. */
struct stalled_receiver {
    stalled_receiver() : listen_fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0))
    {
        const int rcvbuf = 16 * 1024;
        setsockopt(listen_fd.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(bind(listen_fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
                  0);
        EXPECT_EQ(listen(listen_fd.get(), 1), 0);
        socklen_t len = sizeof(addr);
        getsockname(listen_fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
        port = ntohs(addr.sin_port);
    }
    void accept_one()
    {
        conn = file_descriptor(accept(listen_fd.get(), nullptr, nullptr));
    }
    /*! Bytes its kernel received (and acknowledged) that nobody read. */
    std::size_t unread() const
    {
        int n = 0;
        ioctl(conn.get(), FIONREAD, &n);
        return std::size_t(n);
    }
    file_descriptor listen_fd;
    file_descriptor conn;
    unsigned short port = 0;
};

/*! A sender of up to \p n queued heaps to \p rx, with small buffers; a reset, not
 * peer_timeout, must end its connection. */
std::unique_ptr<send::tcp_stream>
stalled_sender(boost::asio::io_context& io, stalled_receiver& rx, std::size_t n)
{
    auto tx = std::make_unique<send::tcp_stream>(
        io,
        send::stream_config()
            .set_max_packet_size(9000)
            .set_max_heaps(n)
            .set_inline_completions(true),
        to(rx.port).set_buffer_size(64 * 1024).set_peer_timeout(60s));
    rx.accept_one();
    return tx;
}

/*! Queues heaps [first, last) of 4000 bytes (one packet each), kept in \p heaps. */
void queue_heaps(send::tcp_stream& tx,
                 std::vector<std::unique_ptr<pattern_heap>>& heaps,
                 std::size_t first,
                 std::size_t last,
                 const send::stream::completion_handler& handler)
{
    for (std::size_t i = first; i < last; i++) {
        heaps.push_back(std::make_unique<pattern_heap>(i + 1, 4000));
        EXPECT_TRUE(tx.async_send_heap(heaps.back()->h, handler));
    }
}

// "Sent" on tcp means acknowledged by the receiver's TCP (spead2 reports a heap sent
// once its own kernel took it; gr-spead waits for the acknowledgment). A receiver
// that stops reading still acknowledges what fits its socket buffer: those heaps count
// as sent though its application never reads them. What sits unacknowledged in the
// sender's buffer when the receiver dies is lost in flight, never sent.
TEST(TcpFailures, HeapsNotAcknowledgedWhenTheReceiverDiesAreLostInFlight)
{
    stalled_receiver rx;
    boost::asio::io_context io;
    constexpr std::size_t n = 200;
    std::vector<std::unique_ptr<pattern_heap>> heaps; // outlive the stream
    auto tx = stalled_sender(io, rx, n);
    // One heap first, sent once acknowledged: its size on the wire (all are alike).
    queue_heaps(*tx, heaps, 0, 1, [](const boost::system::error_code&, std::size_t) {});
    tx->flush();
    const send_stats first = tx->get_stats();
    ASSERT_EQ(first[send_stat::heaps], 1u);
    ASSERT_EQ(first[send_stat::packets], 1u);
    const std::size_t wire = first[send_stat::bytes];
    queue_heaps(*tx, heaps, 1, n, [](const boost::system::error_code&, std::size_t) {});
    // The receiver's buffer fills (its kernel acknowledged that much) and stays full.
    std::size_t unread = 0;
    EXPECT_TRUE(eventually([&] {
        const std::size_t before = rx.unread();
        std::this_thread::sleep_for(200ms);
        unread = rx.unread();
        return unread > 0 && unread == before;
    }));
    const send_stats before = tx->get_stats();
    const std::size_t acked_heaps = unread / wire;
    EXPECT_LE(before[send_stat::heaps], acked_heaps) << "sent before acknowledged";
    EXPECT_LT(acked_heaps, n) << "the buffers must not hold every heap for this test";
    EXPECT_EQ(before[send_stat::connections_lost], 0u);
    const auto killed = steady::now();
    rx.conn = file_descriptor(); // dies with unread data: its kernel resets
    EXPECT_TRUE(eventually([&] {
        const send_stats st = tx->get_stats();
        return st[send_stat::heaps] + st[send_stat::heaps_failed] == n;
    }));
    EXPECT_LT(steady::now() - killed, 3s) << "the reset is seen at once";
    const send_stats st = tx->get_stats();
    EXPECT_EQ(st[send_stat::connections_lost], 1u);
    EXPECT_EQ(st[send_stat::heaps], acked_heaps);
    EXPECT_GE(st[send_stat::heaps_lost_in_flight], 1u);
    EXPECT_LE(st[send_stat::heaps_lost_in_flight], st[send_stat::heaps_failed]);
    EXPECT_EQ(st[send_stat::heaps] + st[send_stat::heaps_failed], n);
}

/*! Destroys a stream with \p n heaps queued to a receiver that reads nothing. */
void stop_with_unacknowledged_heaps(std::size_t n)
{
    SCOPED_TRACE(n);
    stalled_receiver rx;
    boost::asio::io_context io;
    std::vector<std::unique_ptr<pattern_heap>> heaps;
    std::atomic<std::size_t> ok{ 0 }, failed{ 0 };
    auto tx = stalled_sender(io, rx, n);
    queue_heaps(*tx, heaps, 0, n, [&](const boost::system::error_code& ec, std::size_t) {
        (ec ? failed : ok)++;
    });
    ASSERT_TRUE(eventually([&] { return rx.unread() > 0; }));
    std::this_thread::sleep_for(200ms); // the buffers fill
    const auto start = steady::now();
    tx.reset(); // the receiver stays, reading nothing: acknowledgment never comes
    EXPECT_LT(steady::now() - start, 8s); // 2 s without progress, then given up
    EXPECT_EQ(ok + failed, n);
    EXPECT_GE(failed.load(), 1u);
    // Only heaps in the receiver's kernel were acknowledged (each is over 4000 bytes).
    EXPECT_LE(ok.load() * 4000, rx.unread());
}

TEST(TcpFailures, StopWithHeapsNeverAcknowledgedEndsWithinTheGrace)
{
    stop_with_unacknowledged_heaps(100); // the writer waits for room
    stop_with_unacknowledged_heaps(20);  // all written: it waits for acknowledgment
}

/*! RSS may grow this much over the 100 cycles: allocator noise. A leak of what a
 * connection holds (its 256 KiB buffer, its sender's connector thread's stack, its
 * source's heap assembler) would grow it by 25 MiB or more. */
constexpr std::size_t rss_slack_kib = 4 * 1024;

TEST(TcpFailures, HundredConnectCyclesKeepFdsThreadsAndMemoryFlat)
{
    tcp_receiver rx(recv::tcp_config().set_keep_listening(true));
    boost::asio::io_context io;
    auto cycle = [&](int i) {
        {
            // Every other sender reconnects: its connector thread must go with it.
            send::tcp_stream tx(
                io, send::stream_config(), to(rx.port()).set_reconnect(i % 2 == 0));
            ASSERT_TRUE(eventually([&] { return tx.is_connected(); }));
            tx.send_heap(pattern_heap(std::uint64_t(i), 1000).h, i);
        }
        recv::heap h;
        ASSERT_EQ(rx.stream.pop(h, 5s), recv::stream::pop_result::heap);
        ASSERT_TRUE(eventually([&] { return rx.reader.get_num_connections() == 0; }));
    };
    for (int i = 1; i <= 5; i++)
        cycle(i);
    const std::size_t fds = count_entries("/proc/self/fd");
    const std::size_t threads = count_entries("/proc/self/task");
    const std::size_t rss = rss_kib();
    for (int i = 6; i <= 105; i++)
        cycle(i);
    EXPECT_EQ(count_entries("/proc/self/fd"), fds);
    EXPECT_EQ(count_entries("/proc/self/task"), threads);
    const std::size_t rss_end = rss_kib();
    ASSERT_GT(rss, 0u) << "no VmRSS in /proc/self/status";
    if (under_asan) // its quarantine keeps freed memory, whatever the code does
        std::cout << "RSS not judged under AddressSanitizer (quarantine)\n";
    else
        EXPECT_LE(rss_end, rss + rss_slack_kib)
            << "RSS grew from " << rss << " to " << rss_end << " KiB over 100 cycles";
    const recv_stats st = stopped_stats(rx);
    EXPECT_EQ(st[recv_stat::connections_accepted], 105u);
    EXPECT_EQ(st[recv_stat::connections_closed], 105u);
}

TEST(TcpFailures, ReaderWithoutEndpointOrOnABusyPortIsRefused)
{
    recv::stream s;
    expect_invalid([&] { s.emplace_reader<recv::tcp_reader>(recv::tcp_config()); },
                   "endpoint");
    tcp_receiver rx;
    const std::string message = expect_error<std::system_error>(
        [&] {
            s.emplace_reader<recv::tcp_reader>(
                recv::tcp_config().set_endpoint(rx.endpoint()));
        },
        "a second listener on a port in use");
    EXPECT_NE(message.find("in use"), std::string::npos) << message;
    boost::asio::io_context io;
    expect_invalid(
        [&] { send::tcp_stream tx(io, send::stream_config(), send::tcp_config()); },
        "endpoint");
}

} // namespace
