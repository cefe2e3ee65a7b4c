/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::stream: config validation, the bounded heap queue, end of stream, stop() and
// the statistics it sums. Packets are fed by fake readers, no sockets.

#include "error_message.h"
#include "fake_reader.h"
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/recv_stream.h>
#include <condition_variable>
#include <gtest/gtest.h>
#include <malloc.h>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using spead_test::expect_invalid;
using spead_test::fake_reader;

void put_be64(std::vector<std::uint8_t>& out, std::uint64_t v)
{
    for (int i = 7; i >= 0; i--)
        out.push_back(std::uint8_t(v >> (8 * i)));
}

std::uint64_t immediate(std::uint64_t id, std::uint64_t value)
{
    return (std::uint64_t(1) << 63) | (id << 40) | value;
}

/*! Packet \p index of \p n_packets of heap \p cnt (SPEAD-64-40), each carrying
 * \p chunk payload bytes; optionally with STREAM_CTRL = stop. */
std::vector<std::uint8_t> make_packet(std::uint64_t cnt,
                                      std::size_t chunk = 16,
                                      std::size_t index = 0,
                                      std::size_t n_packets = 1,
                                      bool stop = false)
{
    std::vector<std::uint64_t> pointers = {
        immediate(item_id::heap_cnt, cnt),
        immediate(item_id::heap_size, chunk * n_packets),
        immediate(item_id::heap_offset, chunk * index),
        immediate(item_id::payload_length, chunk),
    };
    if (stop)
        pointers.push_back(immediate(item_id::stream_ctrl, stream_ctrl::stop));
    std::vector<std::uint8_t> out = { 0x53, 4, 3, 5,
                                      0,    0, 0, std::uint8_t(pointers.size()) };
    for (auto p : pointers)
        put_be64(out, p);
    for (std::size_t i = 0; i < chunk; i++)
        out.push_back(std::uint8_t(cnt + i));
    return out;
}

/*! Single-packet heaps with cnts \p first to \p last. */
std::vector<std::vector<std::uint8_t>> heaps_from(std::uint64_t first, std::uint64_t last)
{
    std::vector<std::vector<std::uint8_t>> packets;
    for (std::uint64_t cnt = first; cnt <= last; cnt++)
        packets.push_back(make_packet(cnt));
    return packets;
}

/*! Waits up to two seconds for \p condition; true if it came. */
bool eventually(const std::function<bool()>& condition)
{
    const auto deadline = steady::now() + 2s;
    while (!condition()) {
        if (steady::now() > deadline)
            return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

/*! A reader whose loop waits like a socket reader (timed waits, no wake()), for
 * stop() promptness. */
class threaded_reader : public recv::reader
{
public:
    explicit threaded_reader(recv::stream& s) : reader(s) {}
    std::atomic<bool> joined{ false };

protected:
    void run() override
    {
        while (!stopping())
            std::this_thread::sleep_for(50ms);
        joined = true;
    }
};

std::vector<std::uint64_t> drain_cnts(recv::stream& s)
{
    std::vector<std::uint64_t> out;
    recv::heap h;
    while (s.try_pop(h))
        out.push_back(h.cnt());
    return out;
}

// ---- stream_config -------------------------------------------------------------

TEST(RecvStreamConfig, DefaultsAreSpead2s)
{
    recv::stream_config c;
    EXPECT_EQ(c.get_max_heaps(), 4u);
    EXPECT_EQ(c.get_max_heap_size(), 64u * 1024 * 1024);
    EXPECT_EQ(c.get_incomplete_heaps(), recv::incomplete_heaps::drop);
    EXPECT_TRUE(c.get_stop_on_stop_heap());
    EXPECT_EQ(c.get_queue_heaps(), 8u);
    EXPECT_EQ(c.get_pool_heaps(), 4u + 8u + 4u);
}

TEST(RecvStreamConfig, SettersChainAndStore)
{
    recv::stream_config c;
    c.set_max_heaps(7)
        .set_max_heap_size(1000)
        .set_incomplete_heaps(recv::incomplete_heaps::deliver)
        .set_stop_on_stop_heap(false)
        .set_queue_heaps(3);
    EXPECT_EQ(c.get_max_heaps(), 7u);
    EXPECT_EQ(c.get_max_heap_size(), 1000u);
    EXPECT_EQ(c.get_incomplete_heaps(), recv::incomplete_heaps::deliver);
    EXPECT_FALSE(c.get_stop_on_stop_heap());
    EXPECT_EQ(c.get_queue_heaps(), 3u);
}

TEST(RecvStreamConfig, ZeroIsRejectedNamingTheParameter)
{
    recv::stream_config c;
    expect_invalid([&] { c.set_max_heaps(0); }, "max_heaps");
    expect_invalid([&] { c.set_max_heap_size(0); }, "max_heap_size");
    expect_invalid([&] { c.set_queue_heaps(0); }, "queue_heaps");
    expect_invalid(
        [&] { c.set_incomplete_heaps(static_cast<recv::incomplete_heaps>(9)); },
        "incomplete_heaps");
    EXPECT_EQ(c.get_max_heaps(), 4u); // unchanged after a rejected value
}

// ---- queue -----------------------------------------------------------------------

TEST(RecvStream, FullQueueDropsTheNewestHeapAndCountsIt)
{
    recv::stream s(recv::stream_config().set_queue_heaps(2));
    auto& r = s.emplace_reader<fake_reader>();
    EXPECT_TRUE(eventually([&] { return r.started.load(); }));
    EXPECT_TRUE(r.feed({ make_packet(1),
                         make_packet(2),
                         make_packet(3),
                         make_packet(4),
                         make_packet(5) }));

    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::heaps], 5u);
    EXPECT_EQ(stats[recv_stat::heaps_dropped_queue_full], 3u);
    EXPECT_EQ(drain_cnts(s), (std::vector<std::uint64_t>{ 1, 2 }));
}

TEST(RecvStreamConfig, QueueHeapsIsBoundedNamingTheValueAndTheLimit)
{
    recv::stream_config c;
    const std::size_t too_many = recv::stream_config::max_queue_heaps + 1;
    try {
        c.set_queue_heaps(too_many);
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("queue_heaps: " + std::to_string(too_many), 0), 0u) << what;
        EXPECT_NE(what.find("at most 1048576"), std::string::npos) << what;
    }
    EXPECT_EQ(c.set_queue_heaps(recv::stream_config::max_queue_heaps).get_queue_heaps(),
              recv::stream_config::max_queue_heaps);
}

TEST(RecvStream, TheLongestQueueCostsNothingUntilItFills)
{
    // The queue's slots grow as heaps wait: the longest queue allowed is made with
    // less than a megabyte (it was 1048576 slots allocated up front).
    const std::size_t before = mallinfo2().uordblks;
    recv::stream s(
        recv::stream_config().set_queue_heaps(recv::stream_config::max_queue_heaps));
    EXPECT_LT(mallinfo2().uordblks - before, std::size_t(1) << 20);
    // Growing keeps the heaps in order, across pops that wrap the ring.
    auto& r = s.emplace_reader<fake_reader>();
    std::vector<std::uint64_t> expected, got;
    std::uint64_t cnt = 1;
    for (int round = 0; round < 4; round++) {
        std::vector<std::vector<std::uint8_t>> packets;
        for (int i = 0; i < 7 + 20 * round; i++, cnt++) {
            packets.push_back(make_packet(cnt));
            expected.push_back(cnt);
        }
        ASSERT_TRUE(r.feed(packets));
        recv::heap h;
        for (int i = 0; i < 5 && s.try_pop(h); i++)
            got.push_back(h.cnt());
    }
    const std::vector<std::uint64_t> rest = drain_cnts(s);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, expected);
    EXPECT_EQ(s.get_stats()[recv_stat::heaps_dropped_queue_full], 0u);
}

TEST(RecvStream, ASenderRestartedWithoutAStopHeapIsHeardAfterAPause)
{
    // A sender run again numbers its heaps from 1: once its traffic has paused, the
    // cnts of its earlier run are forgotten, as spead2_recv (which keeps none) would
    // deliver them. With a stop heap they were already forgotten.
    for (const std::uint64_t first_run : { 1u, 30u, 10000u }) {
        for (const bool stop_heap : { false, true }) {
            recv::stream s(
                recv::stream_config().set_queue_heaps(20000).set_stop_on_stop_heap(
                    false));
            auto& r = s.emplace_reader<fake_reader>();
            auto run = heaps_from(1, first_run);
            if (stop_heap)
                run.push_back(make_packet(first_run + 1, 16, 0, 1, true));
            ASSERT_TRUE(r.feed(run));
            std::this_thread::sleep_for(80ms); // the restart: longer than the gap
            ASSERT_TRUE(r.feed(heaps_from(1, 50)));
            const recv_stats stats = s.get_stats();
            // The stop heap, not stopping the stream, is delivered too.
            EXPECT_EQ(stats[recv_stat::heaps], first_run + 50 + stop_heap)
                << "after " << first_run << " heaps, stop heap " << stop_heap;
            EXPECT_EQ(stats[recv_stat::packets_duplicate], 0u);
            EXPECT_EQ(drain_cnts(s).size(), first_run + 50 + stop_heap);
        }
    }
}

TEST(RecvStream, TrafficThatResumesWithNewCntsKeepsItsHistory)
{
    recv::stream s(recv::stream_config().set_queue_heaps(64));
    auto& r = s.emplace_reader<fake_reader>();
    ASSERT_TRUE(r.feed(heaps_from(1, 30)));
    std::this_thread::sleep_for(80ms); // a pause, but the sender goes on
    ASSERT_TRUE(r.feed({ make_packet(31), make_packet(5), make_packet(32) }));
    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::heaps], 32u);
    EXPECT_EQ(stats[recv_stat::packets_duplicate], 1u); // heap 5 was still remembered
}

TEST(RecvStream, WithoutAPauseRepeatedCntsAreStillDuplicates)
{
    recv::stream s(recv::stream_config().set_queue_heaps(64));
    auto& r = s.emplace_reader<fake_reader>();
    auto batch = heaps_from(1, 30);
    const auto repeated = heaps_from(1, 5); // in the same batch: no pause
    batch.insert(batch.end(), repeated.begin(), repeated.end());
    ASSERT_TRUE(r.feed(batch));
    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::heaps], 30u);
    EXPECT_EQ(stats[recv_stat::packets_duplicate], 5u);
}

TEST(RecvStream, QueueAcceptsAgainOncePopped)
{
    recv::stream s(recv::stream_config().set_queue_heaps(1));
    auto& r = s.emplace_reader<fake_reader>();
    r.feed({ make_packet(1), make_packet(2) });
    EXPECT_EQ(drain_cnts(s), (std::vector<std::uint64_t>{ 1 }));
    r.feed({ make_packet(3) });
    EXPECT_EQ(drain_cnts(s), (std::vector<std::uint64_t>{ 3 }));
    EXPECT_EQ(s.get_stats()[recv_stat::heaps_dropped_queue_full], 1u);
}

TEST(RecvStream, PopReturnsAQueuedHeapWithItsPayload)
{
    recv::stream s;
    auto& r = s.emplace_reader<fake_reader>();
    r.feed({ make_packet(9, 8, 0, 2), make_packet(9, 8, 1, 2) });
    recv::heap h;
    ASSERT_EQ(s.pop(h, 1s), recv::stream::pop_result::heap);
    EXPECT_EQ(h.cnt(), 9u);
    ASSERT_EQ(h.size(), 16u);
    EXPECT_EQ(h.payload()[0], 9);
    EXPECT_EQ(h.payload()[8], 9);
}

TEST(RecvStream, PopTimesOutWhenNoHeapArrives)
{
    recv::stream s;
    recv::heap h;
    const auto start = steady::now();
    EXPECT_EQ(s.pop(h, 30ms), recv::stream::pop_result::timeout);
    const auto elapsed = steady::now() - start;
    EXPECT_GE(elapsed, 30ms);
    EXPECT_LT(elapsed, 5s);
    EXPECT_FALSE(h);
}

TEST(RecvStream, TryPopIsFalseWhenEmpty)
{
    recv::stream s;
    recv::heap h;
    EXPECT_FALSE(s.try_pop(h));
}

TEST(RecvStream, PopChunkOnAStreamOfHeapsSaysToMakeItContinuous)
{
    recv::stream s;
    recv::chunk_entry e;
    try {
        s.pop_chunk(e, 1ms);
        FAIL() << "pop_chunk on a stream of heaps returned";
    } catch (const std::logic_error& err) {
        EXPECT_NE(std::string(err.what()).find("set_continuous"), std::string::npos)
            << err.what();
    }
    EXPECT_THROW(s.try_pop_chunk(e), std::logic_error);
    EXPECT_EQ(s.get_heap_bytes(), 0u);
}

// ---- end of stream ---------------------------------------------------------------

TEST(RecvStream, StopDrainsQueuedHeapsThenReportsStopped)
{
    recv::stream s;
    auto& r = s.emplace_reader<fake_reader>();
    r.feed({ make_packet(1), make_packet(2) });
    s.stop();
    EXPECT_TRUE(s.is_stopped());
    EXPECT_TRUE(r.stopped);
    recv::heap h;
    ASSERT_EQ(s.pop(h, 1s), recv::stream::pop_result::heap);
    EXPECT_EQ(h.cnt(), 1u);
    ASSERT_EQ(s.pop(h, 1s), recv::stream::pop_result::heap);
    EXPECT_EQ(h.cnt(), 2u);
    EXPECT_EQ(s.pop(h, 1s), recv::stream::pop_result::stopped);
}

TEST(RecvStream, StopCountsLiveHeapsAsFlushed)
{
    recv::stream s;
    auto& r = s.emplace_reader<fake_reader>();
    r.feed({ make_packet(1, 16, 0, 2) }); // first half of a two-packet heap
    s.stop();
    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::incomplete_heaps_flushed], 1u);
    EXPECT_EQ(stats[recv_stat::heaps], 0u);
}

TEST(RecvStream, PacketsAfterStopAreCountedNotAssembled)
{
    recv::stream s;
    auto& r = s.emplace_reader<fake_reader>();
    s.stop();
    EXPECT_FALSE(r.feed({ make_packet(1), make_packet(2) }));
    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::packets_after_stop], 2u);
    EXPECT_EQ(stats[recv_stat::heaps], 0u);
}

TEST(RecvStream, StopIsIdempotent)
{
    recv::stream s;
    s.emplace_reader<fake_reader>();
    s.stop();
    s.stop();
    EXPECT_TRUE(s.is_stopped());
}

TEST(RecvStream, StopHeapEndsTheStreamAndTheRestOfTheBatchCountsAfterStop)
{
    recv::stream s;
    auto& r = s.emplace_reader<fake_reader>();
    EXPECT_FALSE(
        r.feed({ make_packet(1), make_packet(2, 16, 0, 1, true), make_packet(3) }));
    EXPECT_TRUE(s.is_stopped());
    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::stop_heaps], 1u);
    EXPECT_EQ(stats[recv_stat::packets_after_stop], 1u);

    recv::heap h;
    ASSERT_EQ(s.pop(h, 1s), recv::stream::pop_result::heap);
    EXPECT_EQ(h.cnt(), 1u);
    // Whatever else is queued (the stop heap itself, for its metadata), the stream
    // then reports that it has ended.
    recv::stream::pop_result last = recv::stream::pop_result::heap;
    for (int i = 0; i < 4 && last == recv::stream::pop_result::heap; i++)
        last = s.pop(h, 1s);
    EXPECT_EQ(last, recv::stream::pop_result::stopped);
}

TEST(RecvStream, StopHeapIsAnOrdinaryHeapWhenStopOnStopHeapIsOff)
{
    recv::stream s(recv::stream_config().set_stop_on_stop_heap(false));
    auto& r = s.emplace_reader<fake_reader>();
    EXPECT_TRUE(r.feed({ make_packet(1, 16, 0, 1, true), make_packet(2) }));
    EXPECT_FALSE(s.is_stopped());
    EXPECT_EQ(s.get_stats()[recv_stat::packets_after_stop], 0u);
    // Delivered like any heap, as spead2 does when it does not stop.
    recv::heap h;
    ASSERT_TRUE(s.try_pop(h));
    EXPECT_TRUE(h.is_stop());
    ASSERT_TRUE(s.try_pop(h));
    EXPECT_EQ(h.cnt(), 2u);
    EXPECT_EQ(s.get_stats()[recv_stat::heaps], 2u);
    EXPECT_EQ(s.get_stats()[recv_stat::stop_heaps], 1u);
}

TEST(RecvStream, EndsWhenEveryReaderHasFinished)
{
    recv::stream s;
    auto& a = s.emplace_reader<fake_reader>();
    auto& b = s.emplace_reader<fake_reader>();
    a.feed({ make_packet(1) });
    a.finish();
    std::this_thread::sleep_for(100ms); // time enough to end the stream if it would
    EXPECT_FALSE(s.is_stopped());
    b.finish();
    EXPECT_TRUE(eventually([&] { return s.is_stopped(); }));
    EXPECT_FALSE(s.has_failed());
    EXPECT_EQ(s.get_stats()[recv_stat::reader_errors], 0u);
    recv::heap h;
    ASSERT_EQ(s.pop(h, 1s), recv::stream::pop_result::heap);
    EXPECT_EQ(s.pop(h, 1s), recv::stream::pop_result::stopped);
}

TEST(RecvStream, AReaderThatFailsEndsTheStreamAfterItsCompletedHeaps)
{
    recv::stream s;
    auto& a = s.emplace_reader<fake_reader>();
    auto& b = s.emplace_reader<fake_reader>(); // still healthy: the stream ends anyway
    a.feed({ make_packet(1), make_packet(2) });
    std::atomic<int> result{ -1 };
    std::thread consumer([&] {
        recv::heap h;
        int got = 0;
        while (s.pop(h, 5s) == recv::stream::pop_result::heap)
            got++;
        result = got;
    });
    a.fail();
    consumer.join(); // pop() said stopped: nobody waits for packets that never come
    EXPECT_EQ(result.load(), 2);
    EXPECT_TRUE(s.is_stopped());
    EXPECT_TRUE(s.has_failed());
    EXPECT_EQ(s.get_failure(), "the test broke the transport; fix: none needed");
    EXPECT_EQ(s.get_stats()[recv_stat::reader_errors], 1u);
    EXPECT_EQ(s.get_stats()[recv_stat::heaps], 2u);
    s.stop();
    EXPECT_TRUE(b.stopped);
}

TEST(RecvStream, EachFailingReaderIsCountedTheFirstCauseIsKept)
{
    recv::stream s;
    auto& a = s.emplace_reader<fake_reader>();
    auto& b = s.emplace_reader<fake_reader>();
    a.fail();
    ASSERT_TRUE(eventually([&] { return s.has_failed(); }));
    b.fail();
    ASSERT_TRUE(eventually([&] { return s.get_stats()[recv_stat::reader_errors] == 2; }));
    EXPECT_EQ(s.get_failure(), "the test broke the transport; fix: none needed");
}

TEST(RecvStream, ANormalEndIsNotAFailure)
{
    recv::stream s;
    s.emplace_reader<fake_reader>().finish();
    ASSERT_TRUE(eventually([&] { return s.is_stopped(); }));
    EXPECT_FALSE(s.has_failed());
    EXPECT_EQ(s.get_failure(), "");
    EXPECT_EQ(s.get_stats()[recv_stat::reader_errors], 0u);
}

TEST(RecvStream, StopWakesAConsumerWaitingInPop)
{
    recv::stream s;
    std::atomic<int> result{ -1 };
    std::thread consumer([&] {
        recv::heap h;
        result = static_cast<int>(s.pop(h, 10s));
    });
    std::this_thread::sleep_for(20ms);
    const auto start = steady::now();
    s.stop();
    consumer.join();
    EXPECT_LT(steady::now() - start, 2s);
    EXPECT_EQ(result.load(), static_cast<int>(recv::stream::pop_result::stopped));
}

TEST(RecvStream, StopJoinsReaderThreadsWithinASecond)
{
    recv::stream s;
    auto& a = s.emplace_reader<threaded_reader>();
    auto& b = s.emplace_reader<threaded_reader>();
    const auto start = steady::now();
    s.stop();
    EXPECT_LT(steady::now() - start, 1s);
    EXPECT_TRUE(a.joined);
    EXPECT_TRUE(b.joined);
}

TEST(RecvStream, DestructionStopsReaders)
{
    auto s = std::make_unique<recv::stream>();
    s->emplace_reader<threaded_reader>();
    s->emplace_reader<threaded_reader>();
    const auto start = steady::now();
    s.reset();
    EXPECT_LT(steady::now() - start, 1s);
}

TEST(RecvStream, HeapsOutliveTheirStream)
{
    recv::heap h;
    {
        recv::stream s;
        s.emplace_reader<fake_reader>().feed({ make_packet(4) });
        ASSERT_TRUE(s.try_pop(h));
    }
    EXPECT_EQ(h.cnt(), 4u);
    EXPECT_EQ(h.payload()[0], 4);
}

// ---- statistics ------------------------------------------------------------------

TEST(RecvStream, StatsSumAssemblerQueueAndEveryReader)
{
    recv_stats a_stats;
    a_stats[recv_stat::packets_dropped_socket_overflow] = 3;
    a_stats[recv_stat::datagrams_oversize] = 1;
    recv_stats b_stats;
    b_stats[recv_stat::packets_dropped_socket_overflow] = 4;
    b_stats[recv_stat::max_batch] = 100;

    recv::stream s(recv::stream_config().set_queue_heaps(1));
    auto& a = s.emplace_reader<fake_reader>(a_stats);
    s.emplace_reader<fake_reader>(b_stats);
    a.feed({ make_packet(1), make_packet(2), make_packet(3) });

    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::packets], 3u);
    EXPECT_EQ(stats[recv_stat::heaps], 3u);
    EXPECT_EQ(stats[recv_stat::batches], 1u);
    EXPECT_EQ(stats[recv_stat::heaps_dropped_queue_full], 2u);
    EXPECT_EQ(stats[recv_stat::packets_dropped_socket_overflow], 7u);
    EXPECT_EQ(stats[recv_stat::datagrams_oversize], 1u);
    EXPECT_EQ(stats[recv_stat::max_batch], 100u); // a maximum, not a sum
}

TEST(RecvStream, MalformedPacketsAreCountedByTheAssembler)
{
    recv::stream s;
    auto& r = s.emplace_reader<fake_reader>();
    std::vector<std::uint8_t> junk = { 1, 2, 3 };
    r.feed({ junk, make_packet(1) });
    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::packets], 1u);
    EXPECT_EQ(stats[recv_stat::packets_truncated] + stats[recv_stat::packets_bad_header],
              1u);
}

} // namespace
