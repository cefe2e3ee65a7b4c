/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The connected-link layer's receive half, with fake connections: packets reach the
// stream where the transport holds them (no copy) and are released only after;
// endings are counted by cause, a failure found after the packets it follows too.

#include "link_fakes.h"
#include "log_capture.h"
#include "transport/link/connected_reader.h"
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <vector>

namespace {

using namespace gr::spead;
using gr::spead::file_descriptor;
using spead_test::ready_fd;

struct fake_messages : link::incoming {
    std::vector<std::vector<std::uint8_t>> messages; //!< stay put: "registered"
    std::size_t next = 0;
    std::size_t per_receive = 3;
    std::ptrdiff_t at_end = 0;  //!< 0: closed cleanly; else -errno
    bool end_with_last = false; //!< the ending is found with the last messages
    bool fd_once = false;       //!< fd() readable until the first receive() only
    std::size_t unfinished = 0; //!< unfinished_bytes() at a close
    std::size_t given_unreleased = 0;
    std::size_t* released_total = nullptr;
    file_descriptor fd_ = ready_fd();

    int fd() const override { return fd_.get(); }
    std::ptrdiff_t receive(recv::packet_view* packets, std::size_t n) override
    {
        EXPECT_EQ(given_unreleased, 0u) << "receive() before release()";
        if (fd_once) {
            std::uint64_t v;
            [[maybe_unused]] auto r = ::read(fd_.get(), &v, sizeof(v));
        }
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
    bool ready() const override { return end_with_last && next == messages.size(); }
    std::size_t unfinished_bytes() const override { return unfinished; }
};

struct fake_listener : link::listener {
    std::unique_ptr<link::incoming> pending;
    file_descriptor fd_ = ready_fd();
    int fd() const override { return fd_.get(); }
    std::unique_ptr<link::incoming> accept(const link::admit_function& admit) override
    {
        if (!pending || !admit(boost::asio::ip::make_address("10.0.0.9")))
            return nullptr;
        return std::move(pending);
    }
    std::string describe() const override { return "fake:1"; }
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

/*! What a reader over one connection of 7 messages did. */
struct reader_run {
    recording_sink sink;
    std::vector<const std::uint8_t*> where; //!< each message's memory
    std::size_t released = 0;
    recv_stats stats;
};

/*! Runs a reader over one connection of 7 messages that ends as \p in says. */
void run_reader(reader_run& run,
                std::unique_ptr<fake_messages> in,
                const link::reader_limits& limits = {})
{
    for (int i = 0; i < 7; i++)
        in->messages.push_back(std::vector<std::uint8_t>(100 + i, std::uint8_t(i / 2)));
    for (const auto& m : in->messages)
        run.where.push_back(m.data());
    in->released_total = &run.released;
    auto l = std::make_unique<fake_listener>();
    l->pending = std::move(in);
    link::connected_reader reader(std::move(l), limits);
    reader.run(run.sink); // returns once its only connection has ended
    run.stats = reader.stats();
}

/*! A connection of 7 messages, then \p at_end from receive(). */
std::unique_ptr<fake_messages> ending_with(std::ptrdiff_t at_end)
{
    auto in = std::make_unique<fake_messages>();
    in->at_end = at_end;
    return in;
}

TEST(ConnectedReader, DeliversInPlaceInOrderThenReleases)
{
    reader_run run;
    run_reader(run, ending_with(0));
    ASSERT_EQ(run.sink.seen.size(), 7u);
    for (std::size_t i = 0; i < 7; i++) {
        EXPECT_EQ(run.sink.seen[i].data, run.where[i]) << "packet " << i << " was copied";
        EXPECT_EQ(run.sink.seen[i].size, 100 + i);
    }
    EXPECT_EQ(run.released, 7u);
    EXPECT_EQ(run.stats[recv_stat::connections_accepted], 1u);
    EXPECT_EQ(run.stats[recv_stat::connections_closed], 1u);
}

TEST(ConnectedReader, CountsEachEndingByCause)
{
    const std::pair<std::ptrdiff_t, recv_stat> cases[] = {
        { -ETIMEDOUT, recv_stat::connections_lost },
        { -EPROTO, recv_stat::connections_framing_errors },
        { -EMSGSIZE, recv_stat::connections_frame_too_large },
        { -EBADMSG, recv_stat::connections_framing_errors }, // not a SPEAD packet
    };
    for (const auto& [err, counter] : cases) {
        reader_run run;
        run_reader(run, ending_with(err));
        EXPECT_EQ(run.sink.seen.size(), 7u); // what came before the failure is kept
        EXPECT_EQ(run.stats[counter], 1u) << "errno " << -err;
        EXPECT_EQ(run.stats[recv_stat::connections_closed], 0u);
    }
}

// A byte stream's peer that closes within a packet: the connection ends as partial,
// not closed, and the whole packets before it are delivered.
TEST(ConnectedReader, ACloseWithinAPacketCountsAsPartial)
{
    auto in = ending_with(0);
    in->unfinished = 5;
    reader_run run;
    run_reader(run, std::move(in));
    EXPECT_EQ(run.sink.seen.size(), 7u);
    EXPECT_EQ(run.stats[recv_stat::connections_partial_frame], 1u);
    EXPECT_EQ(run.stats[recv_stat::connections_closed], 0u);
}

// A failure the transport finds with the last packets (its fd says nothing more):
// the reader asks again at once, so the connection ends now rather than at the next
// event, which may never come.
TEST(ConnectedReader, AFailureFoundWithTheLastPacketsEndsTheConnectionAtOnce)
{
    auto in = ending_with(-EBADMSG);
    in->end_with_last = true;
    in->fd_once = true; // after the packets, nothing wakes the reader but ready()
    in->per_receive = 7;
    link::reader_limits limits;
    limits.idle_timeout = std::chrono::seconds(3); // ends it otherwise, as idle
    reader_run run;
    run_reader(run, std::move(in), limits);
    EXPECT_EQ(run.sink.seen.size(), 7u);
    EXPECT_EQ(run.stats[recv_stat::connections_framing_errors], 1u);
    EXPECT_EQ(run.stats[recv_stat::connections_idle_timeout], 0u);
}

/*! A listener always readable whose accept() always fails for want of descriptors. */
struct exhausted_listener : link::listener {
    std::atomic<int>* accepts = nullptr;
    file_descriptor fd_ = ready_fd();
    int fd() const override { return fd_.get(); }
    std::unique_ptr<link::incoming> accept(const link::admit_function&) override
    {
        ++*accepts;
        throw link::accept_failure(EMFILE, std::generic_category(), "accept on fake:1");
    }
    std::string describe() const override { return "fake:1"; }
};

/*! A sink that stops after a while. */
struct timed_sink : recording_sink {
    std::chrono::steady_clock::time_point until;
    bool stopping() const override { return std::chrono::steady_clock::now() > until; }
};

// Issue 38 item 1: an accept that fails for want of resources leaves the connection
// waiting and the listener readable: the reader counts it, logs it once, and rests
// (accept_backoff) rather than asking again at once.
TEST(ConnectedReader, AcceptFailuresAreCountedAndBackOff)
{
    auto& log = *spead_test::capture_sink::instance();
    std::atomic<int> accepts{ 0 };
    auto l = std::make_unique<exhausted_listener>();
    l->accepts = &accepts;
    link::reader_limits limits;
    limits.keep_listening = true;
    link::connected_reader reader(std::move(l), limits);
    timed_sink sink;
    sink.until = std::chrono::steady_clock::now() + std::chrono::milliseconds(700);
    reader.run(sink);
    EXPECT_GE(accepts.load(), 1);
    // 100 ms of rest after each: about 7 in 700 ms (a spin makes thousands).
    EXPECT_LE(accepts.load(), 12);
    EXPECT_EQ(reader.stats()[recv_stat::accept_failures], std::uint64_t(accepts.load()));
    const std::string text = log.text(); // logged once per burst, with the fix
    const auto first = text.find("could not take a connection on fake:1");
    ASSERT_NE(first, std::string::npos);
    EXPECT_NE(text.find("ulimit -n", first), std::string::npos);
    EXPECT_EQ(text.find("could not take a connection", first + 1), std::string::npos);
}

} // namespace
