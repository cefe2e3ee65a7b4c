/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The connected-link layer's message form (what the rdma transport speaks), with
// fake connections: packets reach the stream where the transport received them (no
// copy) and are released only after; endings are counted by cause; the writer sends
// one message per packet, in order, waiting while the receiver grants no room.

#include "streams/connected_reader.h"
#include "streams/connected_writer.h"
#include "transport/file_descriptor.h"
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <cerrno>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using gr::spead::transport::file_descriptor;

/*! An fd that is always readable. */
file_descriptor ready_fd()
{
    file_descriptor fd(eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK));
    return fd;
}

struct fake_messages : link::incoming, link::message_incoming {
    std::vector<std::vector<std::uint8_t>> messages; //!< stay put: "registered"
    std::size_t next = 0;
    std::size_t per_receive = 3;
    std::ptrdiff_t at_end = 0; //!< 0: closed cleanly; else -errno
    std::size_t given_unreleased = 0;
    std::size_t* released_total = nullptr;
    file_descriptor fd_ = ready_fd();

    int fd() const override { return fd_.get(); }
    std::ptrdiff_t read(std::uint8_t*, std::size_t) override { return -ENOTSUP; }
    link::message_incoming* message_form() override { return this; }
    std::ptrdiff_t receive(recv::packet_view* packets, std::size_t n) override
    {
        EXPECT_EQ(given_unreleased, 0u) << "receive() before release()";
        if (next == messages.size())
            return at_end;
        std::size_t got = 0;
        while (got < std::min(n, per_receive) && next < messages.size()) {
            packets[got++] = { messages[next].data(), messages[next].size() };
            next++;
        }
        given_unreleased = got;
        return std::ptrdiff_t(got);
    }
    void release() override
    {
        *released_total += given_unreleased;
        given_unreleased = 0;
    }
};

struct fake_listener : link::listener {
    std::unique_ptr<link::incoming> pending;
    file_descriptor fd_ = ready_fd();
    int fd() const override { return fd_.get(); }
    std::unique_ptr<link::incoming> accept(boost::asio::ip::address& peer) override
    {
        peer = boost::asio::ip::make_address("10.0.0.9");
        return std::move(pending);
    }
    std::string describe() const override { return "verbs://fake:1"; }
};

struct recording_sink : link::packet_sink {
    std::vector<recv::packet_view> seen;
    bool add_packets(const recv::packet_view* packets, std::size_t n) override
    {
        for (std::size_t i = 0; i < n; i++)
            seen.push_back(packets[i]);
        return true;
    }
    std::size_t wait_for_queue_space(std::chrono::microseconds) override { return 64; }
    bool stopping() const override { return false; }
};

std::vector<std::uint8_t> message(std::uint8_t heap, std::size_t size)
{
    std::vector<std::uint8_t> m(size, heap);
    return m;
}

recv_stats run_reader(std::ptrdiff_t at_end,
                      recording_sink& sink,
                      std::vector<const std::uint8_t*>& where,
                      std::size_t& released)
{
    auto in = std::make_unique<fake_messages>();
    for (int i = 0; i < 7; i++)
        in->messages.push_back(message(std::uint8_t(i / 2), 100 + i));
    for (const auto& m : in->messages)
        where.push_back(m.data());
    in->at_end = at_end;
    in->released_total = &released;
    auto l = std::make_unique<fake_listener>();
    l->pending = std::move(in);
    link::connected_reader reader(std::move(l), link::reader_limits{});
    reader.run(sink); // returns once its only connection has ended
    return reader.stats();
}

TEST(RdmaMessageForm, ReaderDeliversInPlaceInOrderThenReleases)
{
    recording_sink sink;
    std::vector<const std::uint8_t*> where;
    std::size_t released = 0;
    const recv_stats stats = run_reader(0, sink, where, released);
    ASSERT_EQ(sink.seen.size(), 7u);
    for (std::size_t i = 0; i < 7; i++) {
        EXPECT_EQ(sink.seen[i].data, where[i]) << "packet " << i << " was copied";
        EXPECT_EQ(sink.seen[i].size, 100 + i);
    }
    EXPECT_EQ(released, 7u);
    EXPECT_EQ(stats[recv_stat::connections_accepted], 1u);
    EXPECT_EQ(stats[recv_stat::connections_closed], 1u);
}

TEST(RdmaMessageForm, ReaderCountsEachEndingByCause)
{
    const std::pair<std::ptrdiff_t, recv_stat> cases[] = {
        { -ETIMEDOUT, recv_stat::connections_lost },
        { -EPROTO, recv_stat::connections_framing_errors },
        { -EMSGSIZE, recv_stat::connections_frame_too_large },
        { -EBADMSG, recv_stat::connections_framing_errors }, // not a SPEAD packet
    };
    for (const auto& [err, counter] : cases) {
        recording_sink sink;
        std::vector<const std::uint8_t*> where;
        std::size_t released = 0;
        const recv_stats stats = run_reader(err, sink, where, released);
        EXPECT_EQ(sink.seen.size(), 7u); // what came before the failure is kept
        EXPECT_EQ(stats[counter], 1u) << "errno " << -err;
        EXPECT_EQ(stats[recv_stat::connections_closed], 0u);
    }
}

struct fake_outgoing : link::outgoing, link::message_outgoing {
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
    std::ptrdiff_t write(const iovec*, int) override { return -ENOTSUP; }
    link::message_outgoing* message_form() override { return this; }
    std::ptrdiff_t send(const iovec* pieces, int n, std::size_t size) override
    {
        if (refusals_left > 0) {
            refusals_left--;
            return -EAGAIN;
        }
        if (fail_after >= 0 && int(sent->size()) == fail_after)
            return -ECONNRESET;
        std::vector<std::uint8_t> m;
        for (int i = 0; i < n; i++) {
            const auto* p = static_cast<const std::uint8_t*>(pieces[i].iov_base);
            m.insert(m.end(), p, p + pieces[i].iov_len);
        }
        EXPECT_EQ(m.size(), size);
        sent->push_back(std::move(m));
        return 1;
    }
};

struct fake_dialer : link::dialer {
    std::unique_ptr<fake_outgoing> next;
    std::unique_ptr<link::outgoing> connect(std::chrono::milliseconds, int) override
    {
        return std::move(next);
    }
    std::string describe() const override { return "verbs://fake:1"; }
};

TEST(RdmaMessageForm, WriterSendsOneMessagePerPacketWaitingForCredit)
{
    std::vector<std::vector<std::uint8_t>> sent;
    auto d = std::make_unique<fake_dialer>();
    d->next = std::make_unique<fake_outgoing>();
    d->next->sent = &sent;
    d->next->refusals_left = 3;
    link::connected_writer w(std::move(d), link::writer_settings{});
    w.connect_first();
    const std::uint8_t head[2] = { 1, 2 }, body[3] = { 3, 4, 5 };
    const send::packet_piece pieces[2] = { { head, 2 }, { body, 3 } };
    const send::packet packets[2] = { { pieces, 2, 5, 0 }, { pieces + 1, 1, 3, 0 } };
    boost::system::error_code ec;
    EXPECT_EQ(w.write_packets(packets, 2, ec), 2u);
    EXPECT_FALSE(ec);
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[0], (std::vector<std::uint8_t>{ 1, 2, 3, 4, 5 }));
    EXPECT_EQ(sent[1], (std::vector<std::uint8_t>{ 3, 4, 5 }));
}

TEST(RdmaMessageForm, WriterFailsTheBatchFromThePacketCut)
{
    std::vector<std::vector<std::uint8_t>> sent;
    auto d = std::make_unique<fake_dialer>();
    d->next = std::make_unique<fake_outgoing>();
    d->next->sent = &sent;
    d->next->fail_after = 1;
    link::connected_writer w(std::move(d), link::writer_settings{});
    w.connect_first();
    const std::uint8_t body[3] = { 3, 4, 5 };
    const send::packet_piece piece{ body, 3 };
    const send::packet packets[3] = { { &piece, 1, 3, 0 },
                                      { &piece, 1, 3, 0 },
                                      { &piece, 1, 3, 0 } };
    boost::system::error_code ec;
    EXPECT_EQ(w.write_packets(packets, 3, ec), 1u);
    EXPECT_EQ(ec.value(), ECONNRESET);
    EXPECT_FALSE(w.is_connected());
}

/*! A connected writer over a fake connection whose watch() callback lands in \p gone. */
std::unique_ptr<link::connected_writer>
watched_writer(std::vector<std::vector<std::uint8_t>>& sent,
               std::function<void(int)>& gone)
{
    auto d = std::make_unique<fake_dialer>();
    d->next = std::make_unique<fake_outgoing>();
    d->next->sent = &sent;
    d->next->watcher = &gone;
    auto w =
        std::make_unique<link::connected_writer>(std::move(d), link::writer_settings{});
    w->connect_first();
    return w;
}

// The transport sees its peer go while the writer idles (rdma: the CM's DISCONNECTED,
// on a thread of its own): the writer is not connected from then on, and its next
// batch fails at once without sending, reconnect being off.
TEST(RdmaMessageForm, WriterSeesThePeerGoWhileIdle)
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
TEST(RdmaMessageForm, WriterIdleCheckAsksTheConnectionAndCountsADeadPeer)
{
    std::vector<std::vector<std::uint8_t>> sent;
    int calls = 0;
    auto d = std::make_unique<fake_dialer>();
    d->next = std::make_unique<fake_outgoing>();
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
TEST(RdmaMessageForm, WriterIgnoresAPeerGoneAfterAbort)
{
    std::vector<std::vector<std::uint8_t>> sent;
    std::function<void(int)> gone;
    auto w = watched_writer(sent, gone);
    ASSERT_TRUE(gone);
    w->abort();
    gone(ECONNRESET);
    EXPECT_TRUE(w->is_connected());
}

} // namespace
