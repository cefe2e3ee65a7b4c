/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "error_message.h"
#include "protocol/timeline.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace gr::spead;
using fill = timeline::fill;
using verdict = timeline::placement::verdict;

namespace {

/*! A released position as the tests compare it. */
struct out {
    std::uint64_t index;
    std::uint64_t timestamp;
    bool discontinuity;
    std::vector<fill> fills;
    bool operator==(const out& o) const
    {
        return index == o.index && timestamp == o.timestamp &&
               discontinuity == o.discontinuity && fills == o.fills;
    }
};

std::ostream& operator<<(std::ostream& os, const out& o)
{
    os << "{#" << o.index << " t=" << o.timestamp << (o.discontinuity ? " disc" : "")
       << " [";
    for (fill f : o.fills)
        os << (f == fill::complete ? 'C' : f == fill::incomplete ? 'I' : '-');
    return os << "]}";
}

class timeline_test : public ::testing::Test
{
protected:
    void make(std::uint64_t step, std::size_t window, std::size_t substreams = 1)
    {
        timeline_config config;
        config.timestamp_step = step;
        config.window_heaps = window;
        config.substreams = substreams;
        d_substreams = substreams;
        released.clear();
        slots.clear();
        line = std::make_unique<timeline>(config, [this](const timeline::released& r) {
            released.push_back({ r.output_index,
                                 r.timestamp,
                                 r.discontinuity,
                                 std::vector<fill>(r.fills, r.fills + d_substreams) });
            slots.push_back(r.slot);
        });
    }
    void SetUp() override { make(100, 4); }

    /*! Places a heap and, unless \p whole is false, completes it. */
    timeline::placement
    heap(std::uint64_t timestamp, std::size_t substream = 0, bool whole = true)
    {
        const auto p = line->place(timestamp, substream);
        if (whole)
            line->complete(p, substream);
        return p;
    }
    static out c(std::uint64_t index, std::uint64_t timestamp, bool disc = false)
    {
        return { index, timestamp, disc, { fill::complete } };
    }
    static out m(std::uint64_t index, std::uint64_t timestamp, bool disc = false)
    {
        return { index, timestamp, disc, { fill::missing } };
    }

    std::unique_ptr<timeline> line;
    std::vector<out> released;
    std::vector<std::size_t> slots;
    std::size_t d_substreams = 1;
};

} // namespace

TEST(timeline_config, validation_names_the_field_the_value_and_the_fix)
{
    const auto message = [](const timeline_config& config) {
        return spead_test::error_message<std::invalid_argument>(
            [&] { config.validate(); });
    };
    timeline_config config;
    EXPECT_EQ(message(config), "");
    config.timestamp_step = 0;
    EXPECT_EQ(message(config).rfind("timestamp_step: 0", 0), 0u) << message(config);
    config = timeline_config();
    config.window_heaps = 0;
    EXPECT_EQ(message(config).rfind("window_heaps: 0 is out of range; use 1 to", 0), 0u);
    config.window_heaps = std::size_t(1) << 40;
    EXPECT_NE(message(config).find("window_heaps: 1099511627776"), std::string::npos);
    config = timeline_config();
    config.substreams = 0;
    EXPECT_EQ(message(config).rfind("substreams: 0 is out of range", 0), 0u);
    EXPECT_THROW(timeline(config, [](const timeline::released&) {}),
                 std::invalid_argument);
}

TEST_F(timeline_test, heaps_in_order_leave_as_soon_as_they_complete)
{
    const auto p = heap(5000);
    EXPECT_EQ(p.what, verdict::placed);
    EXPECT_EQ(p.position, 0u);
    heap(5100);
    heap(5200);
    const std::vector<out> expected{ c(0, 5000, true), c(1, 5100), c(2, 5200) };
    EXPECT_EQ(released, expected);
    EXPECT_EQ(slots, (std::vector<std::size_t>{ 0, 1, 2 }));
    EXPECT_EQ(line->stats().heaps_placed, 3u);
    EXPECT_EQ(line->stats().positions_released, 3u);
}

TEST_F(timeline_test, a_heap_ahead_of_an_unfinished_one_waits_for_it)
{
    const auto first = heap(0, 0, false); // placed, still filling
    heap(200);
    heap(100);
    EXPECT_TRUE(released.empty());
    line->complete(first, 0);
    const std::vector<out> expected{ c(0, 0, true), c(1, 100), c(2, 200) };
    EXPECT_EQ(released, expected);
}

TEST_F(timeline_test, a_lost_heap_is_released_missing_when_the_window_moves_past_it)
{
    heap(0);
    // position 1 is lost
    heap(200);
    heap(300);
    heap(400);
    EXPECT_EQ(released.size(), 1u); // 2..4 wait behind the gap
    heap(500);                      // window 4: position 1 must leave
    const std::vector<out> expected{ c(0, 0, true), m(1, 100), c(2, 200),
                                     c(3, 300),     c(4, 400), c(5, 500) };
    EXPECT_EQ(released, expected);
    EXPECT_EQ(line->stats().heaps_missing, 1u);
    EXPECT_EQ(line->stats().timestamp_resyncs, 0u);
}

TEST_F(timeline_test, an_incomplete_heap_is_released_incomplete)
{
    heap(0, 0, false);
    for (std::uint64_t t = 100; t <= 400; t += 100)
        heap(t);
    ASSERT_GE(released.size(), 1u);
    EXPECT_EQ(released[0].fills, std::vector<fill>{ fill::incomplete });
    EXPECT_EQ(released.size(), 5u);
    EXPECT_EQ(line->stats().heaps_missing, 0u);
}

TEST_F(timeline_test, a_heap_for_a_released_position_is_late)
{
    heap(0);
    heap(100);
    EXPECT_EQ(heap(0).what, verdict::late);
    EXPECT_EQ(line->stats().heaps_late, 1u);
    EXPECT_EQ(released.size(), 2u);
}

TEST_F(timeline_test, a_heap_before_the_first_one_is_late_unless_far_before)
{
    heap(1000);
    EXPECT_EQ(heap(900).what, verdict::late); // the first heap defines position 0
    EXPECT_EQ(line->stats().heaps_late, 1u);
    EXPECT_EQ(line->stats().timestamp_resyncs, 0u);
}

TEST_F(timeline_test, a_timestamp_off_the_grid_is_misaligned)
{
    heap(1000);
    EXPECT_EQ(heap(1150).what, verdict::misaligned);
    EXPECT_EQ(heap(850).what, verdict::misaligned);
    EXPECT_EQ(line->stats().heaps_misaligned, 2u);
    EXPECT_EQ(line->stats().heaps_placed, 1u);
}

TEST_F(timeline_test, a_second_heap_for_a_live_position_is_a_duplicate)
{
    heap(0, 0, false);
    EXPECT_EQ(heap(0).what, verdict::duplicate);
    EXPECT_EQ(line->stats().heaps_duplicate, 1u);
    EXPECT_TRUE(released.empty());
}

TEST_F(timeline_test, a_substream_index_out_of_range_is_counted)
{
    EXPECT_EQ(heap(0, 1).what, verdict::bad_substream);
    EXPECT_EQ(line->stats().heaps_bad_substream, 1u);
    EXPECT_EQ(line->stats().heaps_placed, 0u);
}

TEST_F(timeline_test, a_jump_within_two_windows_zero_fills_the_gap)
{
    heap(0);
    heap(700); // position 7: window [4, 8) after releasing 1..3 missing
    heap(400);
    heap(500);
    heap(600);
    const std::vector<out> expected{ c(0, 0, true), m(1, 100), m(2, 200), m(3, 300),
                                     c(4, 400),     c(5, 500), c(6, 600), c(7, 700) };
    EXPECT_EQ(released, expected);
    EXPECT_EQ(line->stats().heaps_missing, 3u);
    EXPECT_EQ(line->stats().timestamp_resyncs, 0u);
}

TEST_F(timeline_test, a_jump_beyond_two_windows_starts_a_new_epoch)
{
    heap(0);
    heap(200, 0, false); // live when the jump comes: flushed with position 1 missing
    const auto p = heap(1000000);
    EXPECT_EQ(p.position, 0u);
    EXPECT_EQ(p.epoch, 1u);
    heap(1000100);
    const std::vector<out> expected{ c(0, 0, true),
                                     m(1, 100),
                                     { 2, 200, false, { fill::incomplete } },
                                     c(3, 1000000, true),
                                     c(4, 1000100) };
    EXPECT_EQ(released, expected);
    EXPECT_EQ(line->stats().timestamp_resyncs, 1u);
}

TEST_F(timeline_test, a_sender_restart_far_behind_starts_a_new_epoch)
{
    for (std::uint64_t t = 100000; t < 101000; t += 100)
        heap(t);
    heap(0); // the sender restarted its counter
    heap(100);
    ASSERT_EQ(released.size(), 12u);
    EXPECT_EQ(released[10], c(10, 0, true));
    EXPECT_EQ(released[11], c(11, 100));
    EXPECT_EQ(line->stats().timestamp_resyncs, 1u);
    EXPECT_EQ(line->stats().heaps_late, 0u);
}

TEST_F(timeline_test, a_completion_from_before_a_resync_is_ignored)
{
    const auto old = heap(0, 0, false);
    heap(1000000, 0, false); // new epoch; position 0 again, in slot 0 again
    line->complete(old, 0);
    EXPECT_EQ(released.size(), 1u); // only the flushed old position
    line->flush();
    ASSERT_EQ(released.size(), 2u);
    EXPECT_EQ(released[1].fills, std::vector<fill>{ fill::incomplete });
}

TEST_F(timeline_test, substreams_advance_together_and_fill_apart)
{
    make(10, 4, 2);
    heap(0, 0);
    EXPECT_TRUE(released.empty()); // substream 1 not there yet
    heap(0, 1);
    heap(10, 1); // substream 0's heap at 10 is lost
    heap(20, 0);
    heap(20, 1);
    EXPECT_EQ(released.size(), 1u);
    line->flush();
    ASSERT_EQ(released.size(), 3u);
    EXPECT_EQ(released[1].fills, (std::vector<fill>{ fill::missing, fill::complete }));
    EXPECT_EQ(released[2].fills, (std::vector<fill>{ fill::complete, fill::complete }));
    EXPECT_EQ(line->stats().heaps_missing, 1u);
}

TEST_F(timeline_test, timestamps_near_the_top_of_64_bits_do_not_overflow)
{
    const std::uint64_t step = std::uint64_t(1) << 40;
    make(step, 4);
    const std::uint64_t first = ~std::uint64_t(0) - 3 * step;
    heap(first);
    heap(first + step);
    heap(first + 3 * step);
    line->flush();
    const std::vector<out> expected{ c(0, first, true),
                                     c(1, first + step),
                                     m(2, first + 2 * step),
                                     c(3, first + 3 * step) };
    EXPECT_EQ(released, expected);
}

TEST_F(timeline_test, flush_releases_up_to_the_newest_placed_position_only)
{
    heap(0, 0, false);
    heap(200);
    line->flush();
    EXPECT_EQ(released.size(), 3u);
    line->flush();
    EXPECT_EQ(released.size(), 3u);
    heap(300); // the epoch goes on where it was
    EXPECT_EQ(released.back(), c(3, 300));
}

TEST_F(timeline_test, every_heap_ends_in_one_counter_and_every_position_leaves_once)
{
    // A seeded stream of two substreams with loss, reordering within a few heaps,
    // duplicates, misaligned and incomplete heaps.
    for (unsigned seed = 1; seed <= 20; seed++) {
        make(8, 16, 2);
        std::mt19937 rng(seed);
        std::vector<std::pair<std::uint64_t, std::size_t>> sent;
        for (std::uint64_t k = 0; k < 400; k++)
            for (std::size_t s = 0; s < 2; s++)
                sent.emplace_back(80 + k * 8, s);
        // The first heap stays first and whole: it defines timestamp 80 as position 0.
        for (std::size_t i = 1; i + 1 < sent.size(); i++)
            if (rng() % 4 == 0)
                std::swap(sent[i], sent[std::min(sent.size() - 1, i + 1 + rng() % 6)]);
        std::uint64_t offered = 0, whole = 0, lost = 0;
        std::map<std::pair<std::uint64_t, std::size_t>, int> placed_whole;
        for (std::size_t i = 0; i < sent.size(); i++) {
            auto [t, s] = sent[i];
            const unsigned r = i == 0 ? 50 : rng() % 100;
            if (r < 5) {
                lost++;
                continue;
            }
            if (r < 8)
                t += 3; // off the grid
            const bool complete = r >= 10;
            offered++;
            const auto p = heap(t, s, complete);
            if (p.what == verdict::placed && complete) {
                whole++;
                placed_whole[{ p.position, s }]++;
            }
            if (r >= 97) {
                offered++;
                heap(t, s); // a duplicate right after
            }
        }
        line->flush();
        const timeline_stats& st = line->stats();
        EXPECT_EQ(st.heaps_placed + st.heaps_late + st.heaps_misaligned +
                      st.heaps_duplicate + st.heaps_bad_substream,
                  offered)
            << "seed " << seed;
        EXPECT_EQ(st.timestamp_resyncs, 0u);
        std::uint64_t complete_fills = 0, incomplete_fills = 0, missing_fills = 0;
        for (std::size_t i = 0; i < released.size(); i++) {
            EXPECT_EQ(released[i].index, i);
            EXPECT_EQ(released[i].timestamp, 80 + i * 8) << "seed " << seed;
            EXPECT_EQ(released[i].discontinuity, i == 0);
            for (std::size_t s = 0; s < 2; s++) {
                const fill f = released[i].fills[s];
                complete_fills += f == fill::complete;
                incomplete_fills += f == fill::incomplete;
                missing_fills += f == fill::missing;
                EXPECT_EQ(f == fill::complete, placed_whole.count({ i, s }) == 1)
                    << "seed " << seed << " position " << i << " substream " << s;
            }
        }
        EXPECT_EQ(complete_fills, whole);
        EXPECT_EQ(complete_fills + incomplete_fills, st.heaps_placed);
        EXPECT_EQ(missing_fills, st.heaps_missing);
        EXPECT_EQ(released.size(), st.positions_released);
        EXPECT_GT(lost, 0u);
        EXPECT_GT(st.heaps_late + st.heaps_misaligned + st.heaps_duplicate, 0u);
    }
}
