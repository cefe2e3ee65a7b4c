/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::stream over a fake transport that records what it is given: config
// validation, the cnt sequence, the queue, completion order and timing, blocking
// sends, errors and the rate limiter.

#include "error_message.h"
#include "protocol/packet_writer.h"
#include "protocol/packetiser.h"
#include <gnuradio/spead/send_stream.h>
#include <condition_variable>
#include <gtest/gtest.h>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

/*! What the fake transport saw of one packet. */
struct written_packet {
    std::vector<std::uint8_t> bytes;
    std::size_t substream;
    steady::time_point when;
};

/*!
 * A transport that keeps copies of its packets. Options: hold writes until released
 * (to fill the queue), fail from the n-th packet on, or complete packets only when
 * the test says so (an asynchronous NIC).
 */
class fake_writer : public send::packet_writer
{
public:
    fake_writer(std::size_t max_packet_size, bool record_bytes)
        : d_max_packet_size(max_packet_size), d_record_bytes(record_bytes)
    {
    }
    ~fake_writer() override
    {
        // The stream joins its writer thread before it destroys the writer.
        destroyed_while_writing = d_writing.load();
        packets_when_destroyed = d_written;
    }
    /*! Set by the destructor: a write was under way when the writer went. */
    static inline bool destroyed_while_writing = false;
    /*! Set by the destructor: packets written over the writer's life. */
    static inline std::size_t packets_when_destroyed = 0;

    /*! write_packets() throws from the n-th packet on. */
    void throw_from(std::size_t n) { set(d_throw_from, n); }
    void hold_writes() { set(d_hold, true); }
    void release_writes() { set(d_hold, false); }
    /*! Packets with index >= n (counted over the stream's life) fail. */
    void fail_from(std::size_t n) { set(d_fail_from, n); }
    void defer_completions() { set(d_deferred, true); }
    void complete_all() { set(d_deferred, false); }
    /*! The device dies: the next write reports it (failure()) and every write fails. */
    void die() { set(d_dead, true); }
    bool writer_is_held() { return copy(d_held_now); }

    std::vector<written_packet> packets() { return copy(d_packets); }
    std::uint64_t bytes_written() { return copy(d_bytes); }
    std::vector<std::pair<steady::time_point, std::size_t>> write_log()
    {
        return copy(d_write_log);
    }

    std::size_t write_packets(const send::packet* packets,
                              std::size_t n,
                              boost::system::error_code& ec) override
    {
        d_writing = true;
        struct done_writing {
            std::atomic<bool>& flag;
            ~done_writing() { flag = false; }
        } done{ d_writing };
        std::unique_lock<std::mutex> lock(d_mutex);
        d_held_now = d_hold;
        d_cv.wait(lock, [this] { return !d_hold; });
        d_held_now = false;
        if (d_dead) {
            if (!d_reported_dead)
                failure("the test's device died; make the stream again");
            d_reported_dead = true;
            ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
            return 0;
        }
        const auto now = steady::now();
        std::size_t accepted = 0;
        std::size_t batch_bytes = 0;
        for (; accepted < n; accepted++) {
            if (d_written >= d_throw_from)
                throw std::runtime_error("the test's transport broke");
            if (d_written == d_fail_from) {
                ec = boost::asio::error::host_unreachable;
                break;
            }
            const send::packet& p = packets[accepted];
            std::size_t total = 0;
            written_packet w{ {}, p.substream, now };
            for (std::size_t j = 0; j < p.n_pieces; j++) {
                total += p.pieces[j].length;
                if (d_record_bytes)
                    w.bytes.insert(w.bytes.end(),
                                   p.pieces[j].data,
                                   p.pieces[j].data + p.pieces[j].length);
            }
            EXPECT_EQ(total, p.size);
            EXPECT_LE(p.size, d_max_packet_size);
            if (d_record_bytes)
                d_packets.push_back(std::move(w));
            d_bytes += total;
            batch_bytes += total;
            d_written++;
        }
        d_write_log.emplace_back(now, batch_bytes);
        return accepted;
    }

    std::uint64_t
    reap_completions(bool wait, boost::system::error_code&, std::uint64_t) override
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        if (wait)
            d_cv.wait(lock, [this] { return !d_deferred; });
        if (!d_deferred)
            d_completed = d_written;
        return d_completed;
    }

private:
    /*! Sets an option under the lock and wakes a held write or reap to look again. */
    template <typename T>
    void set(T& option, T value)
    {
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            option = value;
        }
        d_cv.notify_all();
    }
    template <typename T>
    T copy(const T& record)
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        return record;
    }

    std::size_t d_max_packet_size;
    bool d_record_bytes;
    std::atomic<bool> d_writing{ false };
    std::mutex d_mutex;
    std::condition_variable d_cv;
    bool d_hold = false;
    bool d_held_now = false;
    bool d_deferred = false;
    bool d_dead = false;
    bool d_reported_dead = false;
    std::size_t d_fail_from = std::numeric_limits<std::size_t>::max();
    std::size_t d_throw_from = std::numeric_limits<std::size_t>::max();
    std::size_t d_written = 0;
    std::uint64_t d_completed = 0;
    std::uint64_t d_bytes = 0;
    std::vector<written_packet> d_packets;
    std::vector<std::pair<steady::time_point, std::size_t>> d_write_log;
};

/*! A send stream over a fake_writer, with the writer's controls at hand. */
class fake_stream : public send::stream
{
public:
    fake_stream(boost::asio::io_context& io,
                const send::stream_config& config,
                std::size_t substreams = 1,
                bool record_bytes = true)
        : stream(
              io,
              config,
              substreams,
              std::make_unique<fake_writer>(config.get_max_packet_size(), record_bytes))
    {
    }
    ~fake_stream() override
    {
        // Let the writer finish what is queued: the stream's destructor waits for it.
        w().release_writes();
        w().complete_all();
    }

    void hold_writes() { w().hold_writes(); }
    void release_writes() { w().release_writes(); }
    void fail_from(std::size_t n) { w().fail_from(n); }
    void throw_from(std::size_t n) { w().throw_from(n); }
    void die() { w().die(); }
    void defer_completions() { w().defer_completions(); }
    void complete_all() { w().complete_all(); }
    bool writer_is_held() { return w().writer_is_held(); }
    std::vector<written_packet> packets() { return w().packets(); }
    std::uint64_t bytes_written() { return w().bytes_written(); }
    std::vector<std::pair<steady::time_point, std::size_t>> write_log()
    {
        return w().write_log();
    }

private:
    fake_writer& w() { return static_cast<fake_writer&>(writer()); }
};

/*! HEAP_CNT of a SPEAD-64-40 packet (the first item pointer). */
std::uint64_t heap_cnt_of(const std::vector<std::uint8_t>& packet)
{
    std::uint64_t pointer = 0;
    for (int i = 8; i < 16; i++)
        pointer = (pointer << 8) | packet.at(i);
    return pointer & ((std::uint64_t(1) << 40) - 1);
}

/*! HEAP_CNT of each packet the fake writer saw, in order. */
std::vector<std::uint64_t> heap_cnts_of(const std::vector<written_packet>& packets)
{
    std::vector<std::uint64_t> cnts;
    for (const written_packet& p : packets)
        cnts.push_back(heap_cnt_of(p.bytes));
    return cnts;
}

/*! HEAP_OFFSET of a SPEAD-64-40 packet (the third item pointer, as spead2 orders). */
std::uint64_t heap_offset_of(const std::vector<std::uint8_t>& packet)
{
    std::uint64_t pointer = 0;
    for (int i = 24; i < 32; i++)
        pointer = (pointer << 8) | packet.at(i);
    return pointer & ((std::uint64_t(1) << 40) - 1);
}

/*! A heap with one addressed item of \p size bytes. */
struct test_heap {
    explicit test_heap(std::size_t size, std::uint8_t seed = 0) : payload(size)
    {
        for (std::size_t i = 0; i < size; i++)
            payload[i] = std::uint8_t(seed + i * 7);
        h.add_item(0x1000, payload.data(), payload.size(), false);
    }
    // The heap points into payload: a copy would point into the original's memory.
    // (Moving keeps the buffer; without this, std::vector would copy on growth.)
    test_heap(const test_heap&) = delete;
    test_heap(test_heap&&) = default;
    std::vector<std::uint8_t> payload;
    send::heap h;
};

/*! Runs the io_context until \p done or 10 s have passed. */
template <typename Pred>
bool run_until(boost::asio::io_context& io, Pred done)
{
    const auto deadline = steady::now() + 10s;
    while (!done() && steady::now() < deadline) {
        io.restart();
        io.run_for(5ms);
    }
    return done();
}

// ---- stream_config -------------------------------------------------------------

using spead_test::expect_invalid;

TEST(SendStreamConfig, DefaultsAreSpead2s)
{
    send::stream_config c;
    EXPECT_EQ(c.get_max_packet_size(), 1472u);
    EXPECT_EQ(c.get_rate(), 0.0);
    EXPECT_EQ(c.get_burst_size(), 65536u);
    EXPECT_EQ(c.get_max_heaps(), 4u);
}

TEST(SendStreamConfig, BadValuesAreRejectedNamingTheParameter)
{
    send::stream_config c;
    expect_invalid([&] { c.set_max_packet_size(8); }, "max_packet_size");
    expect_invalid([&] { c.set_max_packet_size(65508); }, "max_packet_size");
    expect_invalid([&] { c.set_rate(-1); }, "rate");
    expect_invalid([&] { c.set_rate(std::nan("")); }, "rate");
    expect_invalid([&] { c.set_rate(std::numeric_limits<double>::infinity()); }, "rate");
    expect_invalid([&] { c.set_burst_size(0); }, "burst_size");
    expect_invalid([&] { c.set_burst_rate_ratio(0.99); }, "burst_rate_ratio");
    expect_invalid([&] { c.set_burst_rate_ratio(std::nan("")); }, "burst_rate_ratio");
    expect_invalid([&] { c.set_max_heaps(0); }, "max_heaps");
    EXPECT_EQ(c.get_burst_rate_ratio(), 1.05); // spead2's default
    EXPECT_EQ(c.get_max_packet_size(), 1472u);
}

TEST(SendStreamConfig, AcceptsTheUdpExtremes)
{
    send::stream_config c;
    c.set_max_packet_size(65507).set_rate(1e9).set_burst_size(1).set_max_heaps(1);
    EXPECT_EQ(c.get_max_packet_size(), 65507u);
    c.set_max_packet_size(56);
    EXPECT_EQ(c.get_max_packet_size(), 56u);
}

// ---- cnt sequence --------------------------------------------------------------

TEST(SendStream, CntSequenceNumbersHeapsWithoutAnExplicitCnt)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config());
    s.set_cnt_sequence(10, 3);
    test_heap h(100);
    s.send_heap(h.h);
    s.send_heap(h.h, 5); // explicit: does not advance the sequence
    s.send_heap(h.h);
    s.send_heap(h.h);
    EXPECT_EQ(heap_cnts_of(s.packets()), (std::vector<std::uint64_t>{ 10, 5, 13, 16 }));
}

TEST(SendStream, CntSequenceStartsAtOne)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config());
    test_heap h(10);
    s.send_heap(h.h);
    s.send_heap(h.h);
    EXPECT_EQ(heap_cnts_of(s.packets()), (std::vector<std::uint64_t>{ 1, 2 }));
}

TEST(SendStream, CntStepZeroIsRejected)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config());
    EXPECT_THROW(s.set_cnt_sequence(1, 0), std::invalid_argument);
}

// ---- packets -------------------------------------------------------------------

TEST(SendStream, HeapIsCutIntoPacketsOfAtMostMaxPacketSizeCoveringThePayload)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config().set_max_packet_size(1000));
    test_heap h(10000);
    const std::size_t bytes = s.send_heap(h.h);
    const auto packets = s.packets();
    ASSERT_GE(packets.size(), 11u);
    std::size_t total = 0;
    std::uint64_t expected_offset = 0;
    for (const auto& p : packets) {
        EXPECT_LE(p.bytes.size(), 1000u);
        EXPECT_EQ(heap_offset_of(p.bytes), expected_offset);
        expected_offset += p.bytes.size() - 8 - 8 * std::size_t(p.bytes.at(7));
        total += p.bytes.size();
    }
    EXPECT_EQ(expected_offset, 10000u);
    EXPECT_EQ(bytes, total);
    const send_stats stats = s.get_stats();
    EXPECT_EQ(stats[send_stat::heaps], 1u);
    EXPECT_EQ(stats[send_stat::packets], packets.size());
    EXPECT_EQ(stats[send_stat::bytes], total);
}

TEST(SendStream, PacketsGoToTheirHeapsSubstream)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config(), 3);
    EXPECT_EQ(s.get_num_substreams(), 3u);
    test_heap h(3000);
    s.send_heap(h.h, -1, 2);
    s.send_heap(h.h, -1, 0);
    const auto packets = s.packets();
    ASSERT_GE(packets.size(), 6u);
    ASSERT_EQ(packets.size() % 2, 0u);
    for (std::size_t i = 0; i < packets.size(); i++)
        EXPECT_EQ(packets[i].substream, i < packets.size() / 2 ? 2u : 0u) << i;
}

TEST(SendStream, SubstreamOutOfRangeIsRejected)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config(), 2);
    test_heap h(10);
    EXPECT_THROW(s.send_heap(h.h, -1, 2), std::invalid_argument);
    EXPECT_THROW(s.async_send_heap(
                     h.h, [](auto&&, auto) {}, -1, 2),
                 std::invalid_argument);
}

// ---- queue and completion ------------------------------------------------------

TEST(SendStream, FullQueueRefusesTheHeapWithWouldBlock)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config().set_max_heaps(2));
    s.hold_writes();
    test_heap h(100);
    std::vector<boost::system::error_code> results(3);
    std::vector<bool> ran(3, false);
    for (int i = 0; i < 2; i++)
        EXPECT_TRUE(s.async_send_heap(
            h.h, [&, i](const boost::system::error_code& ec, std::size_t) {
                results[i] = ec;
                ran[i] = true;
            }));
    EXPECT_FALSE(
        s.async_send_heap(h.h, [&](const boost::system::error_code& ec, std::size_t) {
            results[2] = ec;
            ran[2] = true;
        }));
    EXPECT_TRUE(run_until(io, [&] { return bool(ran[2]); }));
    EXPECT_EQ(results[2], boost::asio::error::would_block);
    EXPECT_EQ(s.get_stats()[send_stat::heaps_rejected_queue_full], 1u);

    s.release_writes();
    EXPECT_TRUE(run_until(io, [&] { return ran[0] && ran[1]; }));
    EXPECT_FALSE(results[0]);
    EXPECT_FALSE(results[1]);
    EXPECT_EQ(s.get_stats()[send_stat::heaps], 2u);
}

TEST(SendStream, HandlersRunInQueueOrderWithTheBytesSent)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config().set_max_heaps(16));
    std::vector<test_heap> heaps;
    for (int i = 0; i < 10; i++)
        heaps.emplace_back(100 + 500 * i, std::uint8_t(i));
    std::vector<int> order;
    std::vector<std::size_t> sizes;
    for (int i = 0; i < 10; i++)
        ASSERT_TRUE(s.async_send_heap(
            heaps[i].h, [&, i](const boost::system::error_code& ec, std::size_t bytes) {
                EXPECT_FALSE(ec);
                order.push_back(i);
                sizes.push_back(bytes);
            }));
    s.flush();
    EXPECT_TRUE(order.empty()); // handlers wait for the io_context
    EXPECT_TRUE(run_until(io, [&] { return order.size() == 10; }));
    std::vector<int> expected(10);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(order, expected);
    EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), std::size_t(0)),
              s.bytes_written());
}

TEST(SendStream, HeapCompletesOnlyWhenTheTransportIsDoneWithItsPackets)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config());
    s.defer_completions();
    test_heap h(5000);
    bool done = false;
    ASSERT_TRUE(
        s.async_send_heap(h.h, [&](const boost::system::error_code& ec, std::size_t) {
            EXPECT_FALSE(ec);
            done = true;
        }));
    // Written but not completed: no handler, however long we wait.
    // The heap fits one batch: once a packet is written, all are.
    const auto deadline = steady::now() + 5s;
    while (s.packets().empty() && steady::now() < deadline)
        std::this_thread::sleep_for(1ms);
    ASSERT_FALSE(s.packets().empty());
    io.run_for(50ms);
    EXPECT_FALSE(done);
    EXPECT_EQ(s.get_stats()[send_stat::heaps], 0u);

    s.complete_all();
    EXPECT_TRUE(run_until(io, [&] { return done; }));
    EXPECT_EQ(s.get_stats()[send_stat::heaps], 1u);
}

TEST(SendStream, SendHeapBlocksUntilSentWithoutTheIoContextRunning)
{
    boost::asio::io_context io; // never run
    fake_stream s(io, send::stream_config().set_max_heaps(1));
    test_heap h(20000);
    std::size_t total = 0;
    for (int i = 0; i < 5; i++)
        total += s.send_heap(h.h); // the second waits for room, then for its send
    EXPECT_EQ(total, s.bytes_written());
    EXPECT_EQ(s.get_stats()[send_stat::heaps], 5u);
}

TEST(SendStream, SendHeapThrowsSystemErrorWhenTheTransportFails)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config().set_max_packet_size(1000));
    test_heap h(5000); // 6 packets
    s.fail_from(2);
    try {
        s.send_heap(h.h);
        ADD_FAILURE() << "no exception";
    } catch (const boost::system::system_error& e) {
        EXPECT_EQ(e.code(), boost::asio::error::host_unreachable);
    }
    const send_stats stats = s.get_stats();
    EXPECT_EQ(stats[send_stat::heaps_failed], 1u);
    EXPECT_EQ(stats[send_stat::heaps], 0u);
    EXPECT_EQ(stats[send_stat::packets], 2u);
    EXPECT_EQ(stats[send_stat::packets_failed], 4u); // the rest of the batch
}

/*! Sends a 6-packet heap with the writer broken (by \p break_from: failing or
 * throwing) from its first packet, then again with it mended; both sends' stats. */
send_stats broken_then_mended(void (fake_stream::*break_from)(std::size_t))
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config().set_max_packet_size(1000));
    test_heap h(5000); // 6 packets
    (s.*break_from)(0);
    EXPECT_THROW(s.send_heap(h.h), boost::system::system_error);
    (s.*break_from)(std::numeric_limits<std::size_t>::max());
    EXPECT_GT(s.send_heap(h.h), 5000u);
    return s.get_stats();
}

TEST(SendStream, AFailedHeapDoesNotStopTheNextOne)
{
    const send_stats stats = broken_then_mended(&fake_stream::fail_from);
    EXPECT_EQ(stats[send_stat::heaps_failed], 1u);
    EXPECT_EQ(stats[send_stat::heaps], 1u);
    EXPECT_EQ(stats[send_stat::writer_errors], 0u); // a failed heap is no failed stream
}

TEST(SendStream, FlushWaitsForEveryQueuedHeap)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config().set_max_heaps(8));
    test_heap h(30000);
    for (int i = 0; i < 8; i++)
        ASSERT_TRUE(s.async_send_heap(h.h, [](auto&&, auto) {}));
    s.flush();
    EXPECT_EQ(s.get_stats()[send_stat::heaps], 8u);
}

TEST(SendStream, DestructionSendsWhatIsQueued)
{
    boost::asio::io_context io;
    test_heap h(3000);
    send_stats stats;
    {
        fake_stream s(io, send::stream_config().set_max_heaps(8));
        for (int i = 0; i < 8; i++)
            ASSERT_TRUE(s.async_send_heap(h.h, [](auto&&, auto) {}));
        s.flush();
        stats = s.get_stats();
    }
    EXPECT_EQ(stats[send_stat::heaps], 8u);
}

TEST(SendStream, DestroyingAStreamSendsItsQueueThenDestroysItsWriter)
{
    // No flush: the destructor itself must send what is queued, on the writer thread,
    // and destroy the writer only once that thread has finished.
    boost::asio::io_context io;
    test_heap h(3000); // 3 packets of at most 1472 bytes
    int succeeded = 0;
    fake_writer::destroyed_while_writing = true;
    fake_writer::packets_when_destroyed = 0;
    {
        fake_stream s(io, send::stream_config().set_max_heaps(8));
        s.hold_writes();
        for (int i = 0; i < 8; i++)
            ASSERT_TRUE(s.async_send_heap(h.h,
                                          [&](const boost::system::error_code& ec,
                                              std::size_t) { succeeded += !ec; }));
    }
    EXPECT_FALSE(fake_writer::destroyed_while_writing);
    EXPECT_EQ(fake_writer::packets_when_destroyed, 8u * 3);
    io.poll(); // the handlers were posted before the stream went
    EXPECT_EQ(succeeded, 8);
}

TEST(SendStream, AWriterThatThrowsFailsItsHeapAndTheStreamGoesOn)
{
    const send_stats stats = broken_then_mended(&fake_stream::throw_from);
    EXPECT_EQ(stats[send_stat::heaps_failed], 1u);
    EXPECT_EQ(stats[send_stat::heaps], 1u);
    EXPECT_EQ(stats[send_stat::packets_failed], 6u);
}

TEST(SendStream, AWriterThatFailsForGoodIsReportedAndCountedOnce)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config().set_max_packet_size(1000));
    test_heap h(5000);
    s.send_heap(h.h);
    EXPECT_FALSE(s.has_failed());
    EXPECT_EQ(s.get_failure(), "");
    s.die();
    EXPECT_THROW(s.send_heap(h.h), boost::system::system_error);
    EXPECT_THROW(s.send_heap(h.h), boost::system::system_error);
    EXPECT_TRUE(s.has_failed());
    EXPECT_EQ(s.get_failure(), "the test's device died; make the stream again");
    const send_stats stats = s.get_stats();
    EXPECT_EQ(stats[send_stat::writer_errors], 1u);
    EXPECT_EQ(stats[send_stat::heaps_failed], 2u);
    EXPECT_EQ(stats[send_stat::heaps], 1u);
}

TEST(SendStream, AStreamNeedsAWriter)
{
    boost::asio::io_context io;
    EXPECT_THROW(send::stream(io, send::stream_config(), 1, nullptr),
                 std::invalid_argument);
}

// ---- rate limiter --------------------------------------------------------------

struct timed_run {
    double bytes = 0;   //!< bytes written
    double seconds = 0; //!< from the first write to the last
    double early = 0;   //!< bytes written within 1 ms of the first write
};

/*! Sends \p n heaps of \p size bytes (n <= the queue size) and times their writes. */
timed_run timed_send(fake_stream& s, std::size_t n, std::size_t size)
{
    test_heap h(size);
    const std::size_t before = s.write_log().size();
    for (std::size_t i = 0; i < n; i++)
        EXPECT_TRUE(s.async_send_heap(h.h, [](auto&&, auto) {}));
    s.flush();
    const auto log = s.write_log();
    timed_run out;
    const auto start = log.at(before).first;
    for (std::size_t i = before; i < log.size(); i++) {
        out.bytes += double(log[i].second);
        if (log[i].first < start + 1ms)
            out.early += double(log[i].second);
    }
    out.seconds = std::chrono::duration<double>(log.back().first - start).count();
    return out;
}

TEST(SendStreamRate, StreamIsPacedAndNeverFasterThanItsRate)
{
    // The pacing arithmetic (catch-up after late wake-ups, the peak cap, no catch-up
    // after idle) is tested on a simulated clock in test_rate_limiter.cc. On real clocks
    // only what a busy machine cannot upset is tested here: the stream waits, and never
    // outruns the rate (preemption can only slow it). How close it gets to the rate is
    // a figure for spead_bench, not a test.
    const double rate = 100e6;
    boost::asio::io_context io;
    const auto config = send::stream_config().set_rate(rate).set_max_heaps(16);
    fake_stream s(io, config, 1, false);
    const timed_run run = timed_send(s, 16, 1250000); // 20 MB: 0.2 s
    const double burst = double(config.get_burst_size());
    const auto waits = s.get_stats()[send_stat::rate_limit_waits];
    EXPECT_GT(waits, 0u);
    // The writer always has more than a batch queued, so it waits once per burst, not
    // once per half-burst batch: after each wait two batches (each within a packet of
    // half a burst) go out. Waking late only adds tokens, so this holds however busy
    // the machine is.
    const double per_wait = burst - 2.0 * double(config.get_max_packet_size());
    EXPECT_LE(double(waits), run.bytes / per_wait + 2) << run.bytes << " bytes";
    // Every batch after the first is bounded by one burst plus the peak rate (5 % above
    // the rate while catching up); the first batch is at most half a burst.
    const double fastest = (run.bytes - 1.5 * burst) / (rate * 1.05);
    EXPECT_GE(run.seconds, fastest) << run.bytes << " bytes in " << run.seconds << " s";
}

TEST(SendStreamRate, ABurstRateRatioOfOneNeverCatchesUpAboveTheRate)
{
    // burst_rate_ratio 1: time lost to late wake-ups is made up at the rate itself, so
    // past the first batch and one burst the stream is never ahead of rate x time.
    const double rate = 100e6;
    boost::asio::io_context io;
    const auto config =
        send::stream_config().set_rate(rate).set_max_heaps(16).set_burst_rate_ratio(1.0);
    fake_stream s(io, config, 1, false);
    const timed_run run = timed_send(s, 16, 1250000);
    const double fastest = (run.bytes - 1.5 * double(config.get_burst_size())) / rate;
    EXPECT_GE(run.seconds, fastest) << run.bytes << " bytes in " << run.seconds << " s";
}

TEST(SendStreamRate, NoCatchUpBurstAfterIdle)
{
    const double rate = 20e6;
    const std::size_t burst = 65536;
    boost::asio::io_context io;
    fake_stream s(
        io,
        send::stream_config().set_rate(rate).set_burst_size(burst).set_max_heaps(8),
        1,
        false);
    timed_send(s, 2, 500000); // 50 ms of sending
    std::this_thread::sleep_for(300ms);
    // After 300 ms idle a catching-up limiter would let 6 MB out at once; this one
    // lets one burst out, then paces.
    const timed_run run = timed_send(s, 4, 500000);
    const double minimum = (run.bytes - double(burst)) / rate;
    EXPECT_GE(run.seconds, 0.95 * minimum)
        << run.bytes << " bytes in " << run.seconds << " s";
    // In the first millisecond: the burst, what accrues in 1 ms, and one batch at most.
    EXPECT_LE(run.early, double(burst) + rate * 1e-3 + 64 * 1472.0);
}

TEST(SendStreamRate, UnlimitedStreamNeverWaits)
{
    boost::asio::io_context io;
    fake_stream s(io, send::stream_config(), 1, false);
    timed_send(s, 4, 100000);
    EXPECT_EQ(s.get_stats()[send_stat::rate_limit_waits], 0u);
}

} // namespace
