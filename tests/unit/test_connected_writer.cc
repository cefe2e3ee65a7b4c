/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The connected-link layer's send half, with fake connections: every packet goes, in
// order, waiting while the connection has no room; a byte stream that took part of a
// packet gets it again; a failed connection fails the batch from the packet it cut;
// the peer's end is seen while idle.

#include "link_fakes.h"
#include "transport/link/connected_writer.h"
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <cerrno>
#include <functional>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using gr::spead::file_descriptor;
using spead_test::ready_fd;

struct fake_outgoing : link::outgoing {
    std::vector<std::vector<std::uint8_t>>* sent = nullptr;
    int refusals_left = 0; //!< -EAGAIN this many times first (no credit)
    int fail_after = -1;   //!< then -ECONNRESET once this many are sent
    std::function<void(int)>* watcher = nullptr; //!< gets watch()'s callback
    int* keep_alive_calls = nullptr;
    int keep_alive_error = 0; //!< what keep_alive() says
    file_descriptor fd_ = ready_fd();

    int keep_alive() override
    {
        if (keep_alive_calls)
            ++*keep_alive_calls;
        return keep_alive_error;
    }

    void watch(std::function<void(int)> gone) override
    {
        if (watcher)
            *watcher = std::move(gone);
    }

    int fd() const override { return fd_.get(); }
    /*! One packet a call, as a transport short of credit would take them. */
    std::ptrdiff_t send(const send::packet* packets, std::size_t n) override
    {
        EXPECT_GT(n, 0u);
        if (refusals_left > 0) {
            refusals_left--;
            return -EAGAIN;
        }
        if (fail_after >= 0 && int(sent->size()) == fail_after)
            return -ECONNRESET;
        std::vector<std::uint8_t> m;
        for (std::size_t i = 0; i < packets[0].n_pieces; i++) {
            const auto& piece = packets[0].pieces[i];
            m.insert(m.end(), piece.data, piece.data + piece.length);
        }
        EXPECT_EQ(m.size(), packets[0].size);
        sent->push_back(std::move(m));
        return 1;
    }
    std::ptrdiff_t unacknowledged() const override { return 0; }
};

using dialer_of_messages = spead_test::fake_dialer<fake_outgoing>;

/*! A connected writer, connected, over a fake connection that records what it sends
 * in \p sent, as \p setup prepares it. */
template <typename Setup>
std::unique_ptr<link::connected_writer>
writer_over(std::vector<std::vector<std::uint8_t>>& sent, Setup&& setup)
{
    auto d = std::make_unique<dialer_of_messages>();
    d->next->sent = &sent;
    setup(*d->next);
    auto w =
        std::make_unique<link::connected_writer>(std::move(d), link::writer_settings{});
    w->connect_first();
    return w;
}

TEST(ConnectedWriter, SendsEveryPacketInOrderWaitingForRoom)
{
    std::vector<std::vector<std::uint8_t>> sent;
    auto w = writer_over(sent, [](fake_outgoing& c) { c.refusals_left = 3; });
    const std::uint8_t head[2] = { 1, 2 }, body[3] = { 3, 4, 5 };
    const send::packet_piece pieces[2] = { { head, 2 }, { body, 3 } };
    const send::packet packets[2] = { { pieces, 2, 5, 0 }, { pieces + 1, 1, 3, 0 } };
    boost::system::error_code ec;
    EXPECT_EQ(w->write_packets(packets, 2, ec), 2u);
    EXPECT_FALSE(ec);
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[0], (std::vector<std::uint8_t>{ 1, 2, 3, 4, 5 }));
    EXPECT_EQ(sent[1], (std::vector<std::uint8_t>{ 3, 4, 5 }));
}

TEST(ConnectedWriter, FailsTheBatchFromThePacketCut)
{
    std::vector<std::vector<std::uint8_t>> sent;
    auto w = writer_over(sent, [](fake_outgoing& c) { c.fail_after = 1; });
    const std::uint8_t body[3] = { 3, 4, 5 };
    const send::packet_piece piece{ body, 3 };
    const send::packet packets[3] = { { &piece, 1, 3, 0 },
                                      { &piece, 1, 3, 0 },
                                      { &piece, 1, 3, 0 } };
    boost::system::error_code ec;
    EXPECT_EQ(w->write_packets(packets, 3, ec), 1u);
    EXPECT_EQ(ec.value(), ECONNRESET);
    EXPECT_FALSE(w->is_connected());
}

/*! A connected writer over a fake connection whose watch() callback lands in \p gone. */
std::unique_ptr<link::connected_writer>
watched_writer(std::vector<std::vector<std::uint8_t>>& sent,
               std::function<void(int)>& gone)
{
    return writer_over(sent, [&gone](fake_outgoing& c) { c.watcher = &gone; });
}

// The transport sees its peer go while the writer idles (rdma: the CM's DISCONNECTED,
// on a thread of its own): the writer is not connected from then on, and its next
// batch fails at once without sending, reconnect being off.
TEST(ConnectedWriter, SeesThePeerGoWhileIdle)
{
    std::vector<std::vector<std::uint8_t>> sent;
    std::function<void(int)> gone;
    auto w = watched_writer(sent, gone);
    ASSERT_TRUE(gone) << "the writer did not ask its connection to watch";
    EXPECT_TRUE(w->is_connected());
    std::thread([&gone] { gone(ECONNRESET); }).join();
    EXPECT_FALSE(w->is_connected());
    const std::uint8_t body[3] = { 3, 4, 5 };
    const send::packet_piece piece{ body, 3 };
    const send::packet packet{ &piece, 1, 3, 0 };
    boost::system::error_code ec;
    EXPECT_EQ(w->write_packets(&packet, 1, ec), 0u);
    EXPECT_EQ(ec, boost::asio::error::not_connected);
    EXPECT_TRUE(sent.empty());
}

// While the stream idles it calls the writer's idle() about once a second, which asks
// the connection whether its peer still answers (rdma: a zero-length write; tcp: the
// keepalive's error): an answer is nothing, a dead peer a loss counted while idle.
TEST(ConnectedWriter, IdleCheckAsksTheConnectionAndCountsADeadPeer)
{
    std::vector<std::vector<std::uint8_t>> sent;
    int calls = 0;
    auto d = std::make_unique<dialer_of_messages>();
    d->next->sent = &sent;
    d->next->keep_alive_calls = &calls;
    fake_outgoing& conn = *d->next;
    link::connected_writer w(std::move(d), link::writer_settings{});
    EXPECT_EQ(w.idle_period(), std::chrono::milliseconds(1000));
    w.idle(); // before the first connection: nothing to ask
    EXPECT_EQ(calls, 0);
    w.connect_first();
    w.idle();
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(w.is_connected()) << "a peer that answers is not a loss";
    conn.keep_alive_error = ETIMEDOUT;
    w.idle();
    EXPECT_EQ(calls, 2);
    EXPECT_FALSE(w.is_connected());
    w.idle(); // the connection is gone: not asked again
    EXPECT_EQ(calls, 2);
    const std::uint8_t body[3] = { 3, 4, 5 };
    const send::packet_piece piece{ body, 3 };
    const send::packet packet{ &piece, 1, 3, 0 };
    boost::system::error_code ec;
    EXPECT_EQ(w.write_packets(&packet, 1, ec), 0u);
    EXPECT_EQ(ec, boost::asio::error::not_connected);
    EXPECT_TRUE(sent.empty());
}

// Once the stream is going (abort()), a watcher's report changes nothing.
TEST(ConnectedWriter, IgnoresAPeerGoneAfterAbort)
{
    std::vector<std::vector<std::uint8_t>> sent;
    std::function<void(int)> gone;
    auto w = watched_writer(sent, gone);
    ASSERT_TRUE(gone);
    w->abort();
    gone(ECONNRESET);
    EXPECT_TRUE(w->is_connected());
}

/*! A byte stream taking \p per_call bytes a call: packets are taken once whole. */
struct fake_byte_stream : link::outgoing {
    std::vector<std::uint8_t>* bytes = nullptr;
    std::size_t per_call = 4;
    std::size_t of_first = 0; //!< bytes written of a packet not taken yet
    file_descriptor fd_ = ready_fd();

    int fd() const override { return fd_.get(); }
    std::ptrdiff_t send(const send::packet* packets, std::size_t n) override
    {
        std::size_t budget = per_call, taken = 0;
        while (taken < n && budget > 0) {
            const send::packet& p = packets[taken];
            std::size_t at = 0;
            for (std::size_t i = 0; i < p.n_pieces && budget > 0; i++)
                for (std::size_t j = 0; j < p.pieces[i].length && budget > 0; j++, at++)
                    if (at >= of_first) {
                        bytes->push_back(p.pieces[i].data[j]);
                        budget--;
                        of_first++;
                    }
            if (of_first < p.size)
                break;
            of_first = 0;
            taken++;
        }
        return std::ptrdiff_t(taken);
    }
    std::ptrdiff_t unacknowledged() const override { return 0; }
};

// A byte stream (tcp) may take a packet in parts: the writer offers it again until it
// is whole, and every byte goes once, in order.
TEST(ConnectedWriter, OffersAPacketTakenInPartsAgainUntilWhole)
{
    std::vector<std::uint8_t> bytes;
    auto d = std::make_unique<spead_test::fake_dialer<fake_byte_stream>>();
    d->next->bytes = &bytes;
    d->next->per_call = 3;
    link::connected_writer w(std::move(d), link::writer_settings{});
    w.connect_first();
    const std::uint8_t head[2] = { 1, 2 }, body[5] = { 3, 4, 5, 6, 7 };
    const send::packet_piece pieces[2] = { { head, 2 }, { body, 5 } };
    const send::packet packets[2] = { { pieces, 2, 7, 0 }, { pieces + 1, 1, 5, 0 } };
    boost::system::error_code ec;
    EXPECT_EQ(w.write_packets(packets, 2, ec), 2u);
    EXPECT_FALSE(ec);
    EXPECT_EQ(bytes, (std::vector<std::uint8_t>{ 1, 2, 3, 4, 5, 6, 7, 3, 4, 5, 6, 7 }));
    // Acknowledged at once (unacknowledged() 0): both are done.
    EXPECT_EQ(w.reap_completions(false, ec, 2), 2u);
    EXPECT_FALSE(ec);
}

} // namespace
