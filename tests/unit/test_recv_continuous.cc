/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::stream in continuous mode: heaps placed by timestamp into chunks that the
// consumer pops in output order, control heaps still popped as heaps, the queue bound,
// and several readers (threads) filling the same chunks. Fake readers, no sockets.

#include "fake_reader.h"
#include "packet_builder.h"
#include <gnuradio/spead/recv_stream.h>
#include <gtest/gtest.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using spead_test::fake_reader;
using bytes = std::vector<std::uint8_t>;

constexpr std::uint64_t timestamp_id = 0x1600;
constexpr std::uint64_t substream_id = 0x1601;
constexpr std::size_t heap_bytes = 64; // 16 items of 4 bytes
constexpr std::size_t item_bytes = 4;

/*! The heap at position \p k of substream \p s: bytes counting from a value of both. */
bytes payload(std::uint64_t k, std::uint64_t s = 0)
{
    return spead_test::pattern(heap_bytes, std::uint8_t(3 * k + 100 * s + 1));
}

/*! The two packets of the heap at position \p k (timestamps count items). */
std::vector<bytes> heap_packets(std::uint64_t cnt, std::uint64_t k, std::int64_t s = -1)
{
    const bytes whole = payload(k, s < 0 ? 0 : std::uint64_t(s));
    std::vector<spead_test::pointer> items{ { true, timestamp_id, k * 16 } };
    if (s >= 0)
        items.push_back({ true, substream_id, std::uint64_t(s) });
    std::vector<bytes> out;
    for (std::size_t i = 0; i < 2; i++) {
        const auto first = whole.begin() + std::ptrdiff_t(i * heap_bytes / 2);
        out.push_back(spead_test::packet(cnt,
                                         heap_bytes,
                                         i * heap_bytes / 2,
                                         bytes(first, first + heap_bytes / 2),
                                         items));
    }
    return out;
}

recv::continuous_config continuous(std::size_t substreams = 1)
{
    recv::continuous_config c;
    c.timestamp_item = timestamp_id;
    c.item_bytes = item_bytes;
    c.window_heaps = 4;
    c.chunk_positions = 2;
    c.substreams = substreams;
    c.substream_item = substreams > 1 ? substream_id : 0;
    return c;
}

std::string error_of(const recv::continuous_config& c)
{
    try {
        c.validate();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

/*! Every position popped until the stream stops: (fill of substream 0, its bytes). */
struct popped {
    std::vector<std::uint64_t> timestamps;
    std::vector<recv::position_fill> fills;
    std::vector<bytes> data;
    std::size_t lost = 0;
};

popped drain(recv::stream& s, std::size_t substream = 0)
{
    popped out;
    for (;;) {
        recv::chunk_entry e;
        const auto r = s.pop_chunk(e, 2s);
        if (r != recv::stream::pop_result::heap)
            break;
        for (std::size_t p = 0; p < e.positions; p++) {
            if (!e.data) {
                out.lost++;
                out.timestamps.push_back(~0ull);
                out.fills.push_back(recv::position_fill::missing);
                out.data.push_back(bytes(heap_bytes, 0));
                continue;
            }
            out.timestamps.push_back(e.data->at(p).timestamp);
            out.fills.push_back(e.data->fill(p, substream));
            const std::uint8_t* at = e.data->data(substream) + p * heap_bytes;
            out.data.emplace_back(at, at + heap_bytes);
        }
        s.return_chunk(std::move(e.data));
    }
    return out;
}

} // namespace

TEST(RecvContinuousConfig, BadValuesNameTheFieldAndTheFix)
{
    recv::continuous_config c = continuous();
    EXPECT_EQ(error_of(c), "");
    c.timestamp_item = 0;
    EXPECT_EQ(error_of(c).rfind("timestamp_item: 0 names no item", 0), 0u) << error_of(c);
    c = continuous(2);
    c.substream_item = 0;
    EXPECT_EQ(error_of(c).rfind("substream_item: 0 with 2 substreams", 0), 0u)
        << error_of(c);
    c = continuous();
    c.window_heaps = 0;
    EXPECT_EQ(error_of(c).rfind("window_heaps: 0 is out of range", 0), 0u) << error_of(c);
    c = continuous();
    c.item_bytes = 0;
    EXPECT_EQ(error_of(c).rfind("item_bytes: 0", 0), 0u);
    c = continuous();
    c.queue_positions = 1000000000;
    EXPECT_EQ(error_of(c).rfind("queue_positions: 1000000000 is more than 1048576", 0),
              0u)
        << error_of(c);
    recv::stream_config config;
    EXPECT_THROW(config.set_continuous(recv::continuous_config()), std::invalid_argument);
    EXPECT_FALSE(config.is_continuous());
}

TEST(RecvContinuous, HeapsComeOutByTimestampInChunksAndTheHeapSizeIsLearnt)
{
    recv::stream s(recv::stream_config().set_continuous(continuous()));
    auto& r = s.emplace_reader<fake_reader>();
    EXPECT_EQ(s.get_heap_bytes(), 0u);
    // Out of order within the window (the first heap seen is timestamp 0).
    for (std::uint64_t k : { 0, 2, 1, 3 })
        r.feed(heap_packets(k + 10, k));
    EXPECT_EQ(s.get_heap_bytes(), heap_bytes);
    r.finish();
    const popped out = drain(s);
    ASSERT_EQ(out.data.size(), 4u);
    for (std::uint64_t k = 0; k < 4; k++) {
        EXPECT_EQ(out.data[k], payload(k)) << k;
        EXPECT_EQ(out.fills[k], recv::position_fill::complete);
        EXPECT_EQ(out.timestamps[k], k * 16) << "timestamp_step 0: items per heap";
    }
    const recv_stats st = s.get_stats();
    EXPECT_EQ(st[recv_stat::heaps], 4u);
    EXPECT_EQ(st[recv_stat::packets], 8u);
    EXPECT_EQ(st[recv_stat::positions_released], 4u);
}

TEST(RecvContinuous, ALostHeapIsZerosAndCountedAndTheStreamGoesOn)
{
    recv::stream s(recv::stream_config().set_continuous(continuous()));
    auto& r = s.emplace_reader<fake_reader>();
    for (std::uint64_t k : { 0, 1, 3, 4, 5, 6, 7 })
        r.feed(heap_packets(k + 1, k));
    r.finish();
    const popped out = drain(s);
    ASSERT_EQ(out.data.size(), 8u);
    EXPECT_EQ(out.fills[2], recv::position_fill::missing);
    EXPECT_EQ(out.data[2], bytes(heap_bytes, 0));
    EXPECT_EQ(out.data[3], payload(3));
    const recv_stats st = s.get_stats();
    EXPECT_EQ(st[recv_stat::heaps_missing], 1u);
    EXPECT_EQ(st[recv_stat::bytes_zero_filled], heap_bytes);
    EXPECT_EQ(st[recv_stat::heaps], 7u);
}

TEST(RecvContinuous, ControlHeapsArePoppedAsHeapsAndAStopHeapEndsAfterTheData)
{
    recv::stream s(recv::stream_config().set_continuous(continuous()));
    auto& r = s.emplace_reader<fake_reader>();
    const bytes descriptors = spead_test::packet(
        (1ull << 40) - 1, 8, 0, spead_test::pattern(8), { { false, 0x05, 0 } });
    r.feed({ descriptors });
    r.feed(heap_packets(1, 0));
    r.feed(heap_packets(2, 1));
    r.feed(heap_packets(3, 2));
    // A stop heap (STREAM_CTRL = 2, no payload) ends the reader that brought it; the
    // stream ends with its last reader.
    EXPECT_FALSE(
        r.feed({ spead_test::packet((1ull << 40) - 2, 0, 0, {}, { { true, 0x06, 2 } }),
                 heap_packets(4, 3)[0] }));
    r.finish();
    recv::heap h;
    ASSERT_TRUE(s.try_pop(h));
    EXPECT_EQ(h.cnt(), (1ull << 40) - 1);
    const popped out = drain(s);
    ASSERT_EQ(out.data.size(), 3u) << "the positions still filling are flushed";
    EXPECT_EQ(out.data[2], payload(2));
    EXPECT_TRUE(s.is_stopped());
    EXPECT_EQ(s.get_stats()[recv_stat::heaps], 3u) << "data heaps only";
    EXPECT_EQ(s.get_stats()[recv_stat::control_heaps], 1u) << "descriptors (stop: below)";
    EXPECT_EQ(s.get_stats()[recv_stat::stop_heaps], 1u);
    EXPECT_EQ(s.get_stats()[recv_stat::packets_after_stop], 1u);
}

TEST(RecvContinuous, WithTwoReadersTheStreamEndsWhenBothSendersHaveStopped)
{
    recv::stream s(recv::stream_config().set_continuous(continuous(2)));
    auto& r0 = s.emplace_reader<fake_reader>();
    auto& r1 = s.emplace_reader<fake_reader>();
    const bytes stop =
        spead_test::packet((1ull << 40) - 2, 0, 0, {}, { { true, 0x06, 2 } });
    r0.feed(heap_packets(1, 0, 0));
    EXPECT_FALSE(r0.feed({ stop }));
    r0.finish();
    // The other sender's heaps still count.
    EXPECT_TRUE(r1.feed(heap_packets(2, 0, 1)));
    EXPECT_FALSE(s.is_stopped());
    EXPECT_FALSE(r1.feed({ stop }));
    r1.finish();
    const popped out = drain(s, 1);
    ASSERT_EQ(out.data.size(), 1u);
    EXPECT_EQ(out.data[0], payload(0, 1));
    EXPECT_EQ(s.get_stats()[recv_stat::heaps], 2u);
    EXPECT_EQ(s.get_stats()[recv_stat::stop_heaps], 2u);
}

TEST(RecvContinuous, AConsumerWaitingForAChunkIsWokenAsSoonAsOneIsHandedOn)
{
    // The reader hands the chunk on under the stream's lock and wakes the consumer
    // after releasing it: the wake must not be lost, nor wait for the stream's end.
    recv::stream s(recv::stream_config().set_continuous(continuous()));
    auto& r = s.emplace_reader<fake_reader>();
    std::atomic<bool> returned{ false };
    recv::stream::pop_result result = recv::stream::pop_result::timeout;
    std::size_t positions = 0;
    std::thread consumer([&] {
        recv::chunk_entry e;
        result = s.pop_chunk(e, 60s);
        positions = e.positions;
        returned.store(true);
    });
    std::this_thread::sleep_for(100ms); // the consumer is waiting
    EXPECT_FALSE(returned.load());
    r.feed(heap_packets(10, 0));
    r.feed(heap_packets(11, 1)); // positions 0 and 1: the first chunk is complete
    const auto asked = std::chrono::steady_clock::now();
    while (!returned.load() && std::chrono::steady_clock::now() - asked < 10s)
        std::this_thread::sleep_for(1ms);
    EXPECT_TRUE(returned.load()) << "the consumer was not woken by the chunk";
    EXPECT_FALSE(s.is_stopped());
    r.finish(); // ends the stream, which wakes a consumer still waiting
    consumer.join();
    EXPECT_EQ(result, recv::stream::pop_result::heap);
    EXPECT_EQ(positions, 2u);
}

TEST(RecvContinuous, AHeapSizeThatIsNoWholeNumberOfItemsEndsTheStreamSayingWhy)
{
    recv::continuous_config c = continuous();
    c.item_bytes = 24; // 64 bytes is not a whole number of 24-byte items
    recv::stream s(recv::stream_config().set_continuous(c));
    auto& r = s.emplace_reader<fake_reader>();
    r.feed(heap_packets(1, 0));
    EXPECT_TRUE(s.is_stopped());
    EXPECT_TRUE(s.has_failed());
    EXPECT_NE(s.get_failure().find("64 bytes, not a whole number of 24-byte"),
              std::string::npos)
        << s.get_failure();
    recv::chunk_entry e;
    EXPECT_EQ(s.pop_chunk(e, 10ms), recv::stream::pop_result::stopped);
}

TEST(RecvContinuous, AQueueOfMoreThan16GiBEndsTheStreamAtTheFirstHeapSayingWhy)
{
    // Chunks are allocated as the queue fills, so its bound in memory is checked
    // once the heap size is known: here 2^20 positions of 1 MiB.
    recv::continuous_config c = continuous();
    c.queue_positions = recv::stream_config::max_queue_heaps;
    recv::stream s(recv::stream_config().set_max_heap_size(1 << 20).set_continuous(c));
    auto& r = s.emplace_reader<fake_reader>();
    r.feed({ spead_test::packet(
        1, 1 << 20, 0, bytes(32, 7), { { true, timestamp_id, 0 } }) });
    EXPECT_TRUE(s.has_failed());
    EXPECT_NE(s.get_failure().find("queue_positions (queue_heaps in the block): 1048576 "
                                   "positions of 1048576 bytes are more than 16 GiB"),
              std::string::npos)
        << s.get_failure();
}

TEST(RecvContinuous, AConsumerThatFallsBehindLosesWholeChunksCountedNotTime)
{
    recv::continuous_config c = continuous();
    c.queue_positions = 2; // one chunk beyond the window's
    recv::stream s(recv::stream_config().set_continuous(c));
    auto& r = s.emplace_reader<fake_reader>();
    constexpr std::uint64_t heaps = 40;
    for (std::uint64_t k = 0; k < heaps; k++)
        r.feed(heap_packets(k + 1, k));
    r.finish();
    const popped out = drain(s);
    ASSERT_EQ(out.data.size(), heaps) << "every position is output";
    EXPECT_GT(out.lost, 0u);
    const recv_stats st = s.get_stats();
    EXPECT_EQ(st[recv_stat::heaps_dropped_queue_full], out.lost);
    EXPECT_EQ(st[recv_stat::packets_dropped_queue_full], 2 * out.lost);
    EXPECT_EQ(st[recv_stat::heaps] + st[recv_stat::heaps_dropped_queue_full], heaps);
    for (std::uint64_t k = 0; k < heaps; k++) {
        if (out.timestamps[k] != ~0ull) {
            EXPECT_EQ(out.data[k], payload(k)) << k;
        }
    }
}

TEST(RecvContinuous, AReplayWaitsForChunksInsteadOfLosingThem)
{
    recv::continuous_config c = continuous();
    c.queue_positions = 2;
    recv::stream s(recv::stream_config().set_continuous(c));
    auto& r = s.emplace_reader<fake_reader>();
    // Before the first data heap the stream cannot know how much a packet needs.
    EXPECT_EQ(r.queue_space(1ms), 2u);
    // 3 live chunks + 1 queued, one taken by position 0: what one packet may need
    // at most (the window's 3 chunks) is free.
    r.feed(heap_packets(1, 0));
    EXPECT_EQ(r.queue_space(1ms), 2u);
    for (std::uint64_t k = 1; k < 4; k++)
        r.feed(heap_packets(k + 1, k));
    // Chunk 0 waits for the consumer and chunk 1 fills: 2 free is not enough.
    EXPECT_EQ(r.queue_space(1ms), 0u);
    std::thread consumer([&] { drain(s); });
    for (std::uint64_t k = 4; k < 40; k++) {
        for (int tries = 0; r.queue_space(100ms) == 0 && tries < 100; tries++) {
        }
        r.feed(heap_packets(k + 1, k));
    }
    r.finish();
    consumer.join();
    const recv_stats st = s.get_stats();
    EXPECT_EQ(st[recv_stat::heaps], 40u);
    EXPECT_EQ(st[recv_stat::heaps_dropped_queue_full], 0u);
}

TEST(RecvContinuous, TwoReadersOnTwoThreadsFillTheSameChunks)
{
    // The threads are not paced: the window covers however far one runs ahead.
    constexpr std::uint64_t heaps = 400;
    recv::continuous_config c = continuous(2);
    c.window_heaps = heaps;
    recv::stream s(recv::stream_config().set_continuous(c));
    auto& r0 = s.emplace_reader<fake_reader>();
    auto& r1 = s.emplace_reader<fake_reader>();
    std::thread consumer_thread;
    popped out0;
    std::vector<bytes> out1;
    consumer_thread = std::thread([&] {
        for (;;) {
            recv::chunk_entry e;
            if (s.pop_chunk(e, 2s) != recv::stream::pop_result::heap)
                break;
            for (std::size_t p = 0; e.data && p < e.positions; p++) {
                const std::uint8_t* a = e.data->data(0) + p * heap_bytes;
                const std::uint8_t* b = e.data->data(1) + p * heap_bytes;
                out0.data.emplace_back(a, a + heap_bytes);
                out1.emplace_back(b, b + heap_bytes);
            }
            s.return_chunk(std::move(e.data));
        }
    });
    // Substream 0 on one reader's thread, substream 1 on the other's, at once. The
    // first heap is fed first so both agree on timestamp 0.
    r0.feed(heap_packets(1, 0, 0));
    auto feed = [&](fake_reader& r, std::int64_t sub) {
        for (std::uint64_t k = sub == 0 ? 1 : 0; k < heaps; k++) {
            while (r.queue_space(100ms) == 0 && !s.is_stopped()) {
            }
            r.feed(heap_packets(2 * k + std::uint64_t(sub) + 1, k, sub));
        }
    };
    std::thread t0(feed, std::ref(r0), 0);
    std::thread t1(feed, std::ref(r1), 1);
    t0.join();
    t1.join();
    r0.finish();
    r1.finish();
    consumer_thread.join();
    ASSERT_EQ(out0.data.size(), heaps);
    for (std::uint64_t k = 0; k < heaps; k++) {
        EXPECT_EQ(out0.data[k], payload(k, 0)) << k;
        EXPECT_EQ(out1[k], payload(k, 1)) << k;
    }
    const recv_stats st = s.get_stats();
    EXPECT_EQ(st[recv_stat::heaps], 2 * heaps);
    EXPECT_EQ(st[recv_stat::heaps_missing], 0u);
}
