/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Several receive threads placing into the same chunks of one continuous recv::stream:
// the payload copies run outside the stream's lock, in parallel. Whatever the threads'
// interleaving, every position comes out once and in order, every complete heap is
// bit-exact, everything else is zeros, and every packet and heap ends in one counter.
// These tests also run under ThreadSanitizer (.ci/sanitize, label concurrent).

#include "fake_reader.h"
#include "packet_builder.h"
#include <gnuradio/spead/recv_stream.h>
#include <gtest/gtest.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using spead_test::fake_reader;
using bytes = std::vector<std::uint8_t>;
using packets = std::vector<bytes>;

constexpr std::uint64_t timestamp_id = 0x1600;
constexpr std::uint64_t substream_id = 0x1601;
constexpr std::size_t heap_bytes = 1024;
constexpr std::size_t packet_payload = 256; // 4 packets per heap
constexpr std::size_t item_bytes = 4;
constexpr std::uint64_t step = heap_bytes / item_bytes; // timestamps count items

bytes payload(std::uint64_t k, std::uint64_t s)
{
    return spead_test::pattern(heap_bytes, std::uint8_t(7 * k + 101 * s + 1));
}

/*! The packets of the heap at position \p k of substream \p s (every packet carries
 * the timestamp and substream items, as senders that reorder must). */
packets heap_packets(std::uint64_t k, std::uint64_t s)
{
    const bytes whole = payload(k, s);
    const std::vector<spead_test::pointer> items{ { true, timestamp_id, k * step },
                                                  { true, substream_id, s } };
    packets out;
    for (std::size_t at = 0; at < heap_bytes; at += packet_payload) {
        const auto first = whole.begin() + std::ptrdiff_t(at);
        out.push_back(spead_test::packet(
            2 * k + s + 1, heap_bytes, at, bytes(first, first + packet_payload), items));
    }
    return out;
}

recv::continuous_config config(std::size_t window, std::size_t queue_positions)
{
    recv::continuous_config c;
    c.timestamp_item = timestamp_id;
    c.item_bytes = item_bytes;
    c.window_heaps = window;
    c.chunk_positions = 4;
    c.substreams = 2;
    c.substream_item = substream_id;
    c.queue_positions = queue_positions;
    return c;
}

/*! What the consumer saw, checked position by position as it popped. */
struct seen {
    std::uint64_t positions = 0;
    std::uint64_t lost = 0;                 //!< positions of lost chunks
    std::uint64_t complete = 0;             //!< (position, substream) complete
    std::uint64_t missing = 0;              //!< (position, substream) zeros
    std::uint64_t wrong = 0;                //!< bytes not what the fill says
    std::uint64_t out_of_order = 0;         //!< chunks not following the last one
    std::uint64_t timestamp_mismatches = 0; //!< timestamp not position × step
};

/*! Pops chunks until the stream ends (bounded by \p timeout per chunk). */
seen consume(recv::stream& s)
{
    seen out;
    const bytes zeros(heap_bytes, 0);
    for (int idle = 0; idle < 100;) {
        recv::chunk_entry e;
        const auto r = s.pop_chunk(e, 100ms);
        if (r == recv::stream::pop_result::stopped)
            break;
        if (r == recv::stream::pop_result::timeout) {
            idle++;
            continue;
        }
        idle = 0;
        out.out_of_order += e.first_index != out.positions;
        out.positions += e.positions;
        if (!e.data) {
            out.lost += e.positions;
            continue;
        }
        for (std::size_t p = 0; p < e.positions; p++) {
            // After a resync the output index no longer follows the timestamp: the
            // data is checked against the heap its timestamp names.
            const std::uint64_t timestamp = e.data->at(p).timestamp;
            out.timestamp_mismatches += timestamp != (e.first_index + p) * step;
            const std::uint64_t k = timestamp / step;
            for (std::size_t sub = 0; sub < 2; sub++) {
                const std::uint8_t* at = e.data->data(sub) + p * heap_bytes;
                const bytes got(at, at + heap_bytes);
                if (e.data->fill(p, sub) == recv::position_fill::complete) {
                    out.complete++;
                    out.wrong += got != payload(k, sub);
                } else {
                    out.missing++;
                    out.wrong += got != zeros;
                }
            }
        }
        s.return_chunk(std::move(e.data));
    }
    return out;
}

/*! Hands \p batch packets at a time to \p r until done or the stream ends; returns
 * the packets the stream took before it said it had ended. */
std::uint64_t feed_all(fake_reader& r, const packets& all, std::size_t batch)
{
    std::uint64_t handed = 0;
    for (std::size_t i = 0; i < all.size(); i += batch) {
        const std::size_t n = std::min(batch, all.size() - i);
        const packets part(all.begin() + std::ptrdiff_t(i),
                           all.begin() + std::ptrdiff_t(i + n));
        handed += n;
        if (!r.feed(part))
            break;
    }
    return handed;
}

/*! Feeds one heap's packets at a time, never more than \p lead heaps ahead of the
 * other thread's \p other_done, as a network paces its receive threads, and only with
 * room in the consumer's queue (fake_reader::queue_space()), until done or
 * the stream ends; counts the packets handed over in \p handed. False if the pace could
 * not be kept (the other thread stalled for 30 s). */
bool feed_paced(const recv::stream& s,
                fake_reader& r,
                const std::vector<packets>& heaps,
                std::atomic<std::uint64_t>& done,
                const std::atomic<std::uint64_t>& other_done,
                std::uint64_t lead,
                std::uint64_t& handed)
{
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    for (std::uint64_t k = 0; k < heaps.size(); k++) {
        while (k > other_done.load() + lead && !s.is_stopped())
            if (std::chrono::steady_clock::now() > deadline)
                return false;
            else
                std::this_thread::yield();
        // No faster than the consumer gives chunks back, as a capture replay: on a busy
        // machine a consumer that loses the CPU for a few milliseconds would otherwise
        // see the feeders place every heap into lost chunks before it runs again.
        while (r.queue_space(1ms) == 0 && !s.is_stopped())
            if (std::chrono::steady_clock::now() > deadline)
                return false;
        handed += heaps[k].size();
        if (!heaps[k].empty() && !r.feed(heaps[k]))
            break; // the stream ended
        done.store(k + 1);
    }
    return true;
}

/*! Two readers' threads feeding one substream's heaps each (paced within 3 heaps of
 * each other and by the consumer's queue space), and a consumer thread popping what
 * the stream outputs. */
class paced_feeders
{
public:
    paced_feeders(recv::stream& s,
                  fake_reader& r0,
                  fake_reader& r1,
                  const std::vector<packets>* heaps)
        : d_consumer([this, &s] { d_seen = consume(s); }),
          d_t0([&, heaps] {
              d_paced0 = feed_paced(s, r0, heaps[0], d_done0, d_done1, 3, d_handed0);
          }),
          d_t1([&, heaps] {
              d_paced1 = feed_paced(s, r1, heaps[1], d_done1, d_done0, 3, d_handed1);
          })
    {
    }
    ~paced_feeders()
    {
        for (std::thread* t : { &d_t0, &d_t1, &d_consumer })
            if (t->joinable())
                t->join(); // each ends by itself (bounded waits)
    }
    /*! Waits for both feeders; whether they kept the pace. */
    bool join_feeders()
    {
        d_t0.join();
        d_t1.join();
        return d_paced0 && d_paced1;
    }
    /*! Waits for the consumer (the stream must end); what it saw. */
    seen join_consumer()
    {
        d_consumer.join();
        return d_seen;
    }
    std::uint64_t handed() const { return d_handed0 + d_handed1; }

private:
    std::atomic<std::uint64_t> d_done0{ 0 }, d_done1{ 0 };
    bool d_paced0 = false, d_paced1 = false;
    std::uint64_t d_handed0 = 0, d_handed1 = 0;
    seen d_seen;
    std::thread d_consumer, d_t0, d_t1; // last: they use the members above
};

/*! Packets counted by a continuous stream of data heaps only: one counter each. */
std::uint64_t packets_counted(const recv_stats& st)
{
    return st[recv_stat::packets] + st[recv_stat::packets_duplicate] +
           st[recv_stat::packets_overlap] + st[recv_stat::packets_late] +
           st[recv_stat::packets_refused_heap] +
           st[recv_stat::packets_dropped_queue_full] + st[recv_stat::packets_after_stop] +
           st[recv_stat::packets_heap_size_mismatch] +
           st[recv_stat::packets_over_heap_limits];
}

/*! Heaps offered (at least one packet reached the stream): one counter each. */
std::uint64_t heaps_counted(const recv_stats& st)
{
    return st[recv_stat::heaps] + st[recv_stat::incomplete_heaps_evicted] +
           st[recv_stat::incomplete_heaps_flushed] +
           st[recv_stat::heaps_dropped_queue_full] + st[recv_stat::heaps_late] +
           st[recv_stat::heaps_duplicate_position] + st[recv_stat::heaps_misaligned];
}

} // namespace

TEST(RecvConcurrent, TwoThreadsCopyPacketsOfTheSameHeapsAtOnce)
{
    // Every heap's packets alternate between the two threads, so both copy into the
    // same heaps (and chunks) at once. The window covers any lead one thread takes.
    constexpr std::uint64_t heaps = 600;
    recv::stream s(recv::stream_config().set_continuous(config(heaps, heaps)));
    auto& r0 = s.emplace_reader<fake_reader>();
    auto& r1 = s.emplace_reader<fake_reader>();
    packets to0, to1;
    for (std::uint64_t k = 0; k < heaps; k++)
        for (std::uint64_t sub = 0; sub < 2; sub++) {
            const packets p = heap_packets(k, sub);
            for (std::size_t i = 0; i < p.size(); i++)
                (i % 2 == 0 ? to0 : to1).push_back(p[i]);
        }
    // Timestamp 0 is the first heap's: its first packet goes first.
    ASSERT_TRUE(r0.feed(packets(to0.begin(), to0.begin() + 1)));
    const packets rest0(to0.begin() + 1, to0.end());
    seen out;
    std::thread consumer([&] { out = consume(s); });
    std::thread t0([&] { feed_all(r0, rest0, 7); });
    std::thread t1([&] { feed_all(r1, to1, 5); });
    t0.join();
    t1.join();
    r0.finish();
    r1.finish();
    consumer.join();

    EXPECT_EQ(out.positions, heaps);
    EXPECT_EQ(out.complete, 2 * heaps);
    EXPECT_EQ(out.wrong, 0u);
    EXPECT_EQ(out.out_of_order, 0u);
    EXPECT_EQ(out.timestamp_mismatches, 0u);
    const recv_stats st = s.get_stats();
    EXPECT_EQ(st[recv_stat::heaps], 2 * heaps);
    EXPECT_EQ(st[recv_stat::packets], to0.size() + to1.size());
    EXPECT_EQ(st[recv_stat::heaps_missing], 0u);
}

TEST(RecvConcurrent, LossesInASmallWindowReleasePositionsWhileTheOtherThreadCopies)
{
    // One substream per thread in a window of 8, kept within 3 heaps of each other:
    // lost packets and heaps make positions leave early, by force, while the other
    // thread has copies in flight. Whatever the interleaving: every position once and
    // in order, complete heaps bit-exact, the rest zeros, every packet and heap counted.
    constexpr std::uint64_t heaps = 1500;
    recv::stream s(recv::stream_config().set_continuous(config(8, heaps)));
    auto& r0 = s.emplace_reader<fake_reader>();
    auto& r1 = s.emplace_reader<fake_reader>();
    std::mt19937 random(20261125);
    std::vector<packets> to[2];
    std::uint64_t offered = 0, sent = 0;
    for (std::uint64_t k = 0; k < heaps; k++)
        for (std::uint64_t sub = 0; sub < 2; sub++) {
            packets p = heap_packets(k, sub);
            const unsigned roll = random() % 100;
            if (k > 0 && roll < 3)
                p.clear(); // the whole heap is lost
            else if (k > 0 && roll < 8)
                p.pop_back(); // its last packet is lost: incomplete
            else if (k > 1 && roll >= 96 && !to[sub].back().empty())
                std::swap(to[sub].back().back(), p.front()); // reordered across heaps
            offered += !p.empty();
            sent += p.size();
            to[sub].push_back(std::move(p));
        }
    // Timestamp 0 is the first heap's: its first packet goes first.
    ASSERT_TRUE(r0.feed(packets(to[0][0].begin(), to[0][0].begin() + 1)));
    to[0][0].erase(to[0][0].begin());
    paced_feeders feeders(s, r0, r1, to);
    const bool paced = feeders.join_feeders();
    r0.finish();
    r1.finish();
    const seen out = feeders.join_consumer();

    ASSERT_TRUE(paced);
    const recv_stats st = s.get_stats();
    EXPECT_EQ(out.wrong, 0u);
    EXPECT_EQ(out.out_of_order, 0u);
    EXPECT_EQ(out.timestamp_mismatches, 0u);
    EXPECT_EQ(st[recv_stat::timestamp_resyncs], 0u);
    EXPECT_EQ(out.lost, 0u) << "the queue holds every position";
    EXPECT_EQ(out.positions, heaps);
    EXPECT_EQ(out.positions, st[recv_stat::positions_released]);
    EXPECT_EQ(out.complete, st[recv_stat::heaps]);
    EXPECT_EQ(out.missing, st[recv_stat::heaps_missing]);
    EXPECT_EQ(2 * out.positions, st[recv_stat::heaps] + st[recv_stat::heaps_missing]);
    EXPECT_EQ(packets_counted(st), sent);
    EXPECT_EQ(heaps_counted(st), offered);
    EXPECT_GT(st[recv_stat::heaps], heaps) << "most heaps arrive whole";
    EXPECT_GT(st[recv_stat::incomplete_heaps_evicted], 0u);
}

TEST(RecvConcurrent, StopWhileTwoThreadsPlaceEndsBothAndCountsEveryPacket)
{
    // Paced as a network paces them (within the window), so every heap is placed
    // until stop() comes from a third thread, as a flowgraph's stop does.
    constexpr std::uint64_t heaps = 4000;
    recv::stream s(recv::stream_config().set_continuous(config(64, 16)));
    auto& r0 = s.emplace_reader<fake_reader>();
    auto& r1 = s.emplace_reader<fake_reader>();
    std::vector<packets> to[2];
    for (std::uint64_t k = 0; k < heaps; k++)
        for (std::uint64_t sub = 0; sub < 2; sub++)
            to[sub].push_back(heap_packets(k, sub));
    ASSERT_TRUE(r0.feed(packets(to[0][0].begin(), to[0][0].begin() + 1)));
    to[0][0].erase(to[0][0].begin());
    paced_feeders feeders(s, r0, r1, to);
    // Stop once placing is well under way (bounded: 20 s).
    for (int i = 0; i < 20000 && s.get_stats()[recv_stat::packets] < 2000; i++)
        std::this_thread::sleep_for(1ms);
    s.stop();
    const bool paced = feeders.join_feeders();
    const seen out = feeders.join_consumer();

    ASSERT_TRUE(paced);
    const recv_stats st = s.get_stats();
    EXPECT_TRUE(s.is_stopped());
    EXPECT_GE(st[recv_stat::packets], 2000u);
    EXPECT_EQ(st[recv_stat::timestamp_resyncs], 0u);
    EXPECT_EQ(out.wrong, 0u);
    EXPECT_EQ(out.out_of_order, 0u);
    EXPECT_EQ(out.positions, st[recv_stat::positions_released]);
    EXPECT_EQ(packets_counted(st), 1 + feeders.handed()); // 1: the first, fed above
    // A slow consumer may lose chunks here (the queue is small): counted, not gone.
    EXPECT_EQ(out.complete + out.missing, 2 * (out.positions - out.lost));
    EXPECT_EQ(2 * out.positions,
              st[recv_stat::heaps] + st[recv_stat::heaps_missing] +
                  st[recv_stat::heaps_dropped_queue_full]);
}
