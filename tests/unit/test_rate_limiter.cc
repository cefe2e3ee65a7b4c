/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The rate limiter's arithmetic on a simulated clock: late wake-ups and preemption are
// scripted, so these tests check pacing exactly and never depend on how busy the
// machine running them is. (How close a real stream gets to its rate on real clocks is
// a figure for spead_bench, not a test.)

#include "streams/rate_limiter.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

using namespace gr::spead::send;
using namespace std::chrono_literals;
using clock_type = rate_limiter::clock;

namespace {

struct send_record {
    clock_type::time_point when;
    std::size_t bytes;
};

double seconds(clock_type::duration d)
{
    return std::chrono::duration<double>(d).count();
}

/*!
 * A writer that hands over \p batches batches of \p batch bytes back to back. When
 * the limiter makes it wait, it wakes up late by lateness(i) (the i-th wait).
 * \p backlogged: it tells the limiter that more batches follow (as a full batch does).
 */
std::vector<send_record>
run_writer(rate_limiter& limiter,
           clock_type::time_point& now,
           std::size_t batches,
           std::size_t batch,
           const std::function<clock_type::duration(int)>& lateness,
           bool backlogged = false)
{
    std::vector<send_record> sent;
    int waits = 0;
    for (std::size_t i = 0; i < batches; i++) {
        const auto when = limiter.earliest(batch, now, backlogged);
        if (when > now)
            now = when + lateness(waits++);
        limiter.take(batch, now);
        sent.push_back({ now, batch });
    }
    return sent;
}

/*! How many times the writer of \p sent waited (sent later than the batch before). */
std::size_t waits_of(const std::vector<send_record>& sent)
{
    std::size_t waits = 0;
    for (std::size_t i = 1; i < sent.size(); i++)
        waits += sent[i].when > sent[i - 1].when;
    return waits;
}

/*! Long-run rate of \p sent in bytes/s, not counting the first burst (which leaves at
 * once). */
double long_run_rate(const std::vector<send_record>& sent, double burst)
{
    double bytes = 0;
    for (const auto& s : sent)
        bytes += double(s.bytes);
    return (bytes - burst) / seconds(sent.back().when - sent.front().when);
}

/*! Largest excess, over all windows [sent[j], sent[i]], of the bytes sent in the window
 * over burst + window length × peak_rate. <= 0 when no window breaks the peak. */
double
worst_peak_excess(const std::vector<send_record>& sent, double burst, double peak_rate)
{
    double worst = -burst;
    for (std::size_t j = 0; j < sent.size(); j++) {
        double bytes = 0;
        for (std::size_t i = j; i < sent.size(); i++) {
            bytes += double(sent[i].bytes);
            const double allowed =
                burst + seconds(sent[i].when - sent[j].when) * peak_rate;
            worst = std::max(worst, bytes - allowed);
        }
    }
    return worst;
}

constexpr double rate = 100e6;  // bytes/s
constexpr double burst = 65536; // bytes

clock_type::duration on_time(int) { return 0ns; }

/*! A writer on a busy machine: 2 us late on most waits, 1 ms late on every 200th, and
 * preempted for 10 ms once: 3.6 % of a 2000-batch run lost to lateness. */
clock_type::duration scheduler_like(int i)
{
    if (i == 300)
        return 10ms;
    if (i % 200 == 199)
        return 1ms;
    return 2us;
}

/*! On time except a 20 ms preemption every 400th wait: more than catching up at 5 %
 * above the rate can repay, so the limiter stays in catch-up. */
clock_type::duration preempted(int i) { return i % 400 == 399 ? 20ms : 0ms; }

} // namespace

TEST(RateLimiter, OnTimeWriterGoesAtExactlyTheRate)
{
    auto now = clock_type::time_point() + 1s;
    rate_limiter limiter(rate, burst, rate_limiter::default_catch_up_ratio, now);
    const std::size_t batch = limiter.max_batch_bytes();
    EXPECT_EQ(batch, 32768u);
    const auto sent = run_writer(limiter, now, 1000, batch, on_time);
    // The first burst leaves at once, then one batch per batch/rate.
    EXPECT_EQ(sent[1].when, sent[0].when);
    EXPECT_GT(sent[2].when, sent[1].when);
    EXPECT_NEAR(long_run_rate(sent, burst) / rate, 1.0, 1e-4);
    EXPECT_LE(worst_peak_excess(sent, burst, rate), 1.0); // 1 byte: clock rounding
}

TEST(RateLimiter, LateWakeUpsAreMadeUpAndTheLongRunRateHolds)
{
    auto now = clock_type::time_point() + 1s;
    rate_limiter limiter(rate, burst, rate_limiter::default_catch_up_ratio, now);
    // 2000 batches of 32 KiB at 100 MB/s: 0.66 s, of which 24 ms are lost to lateness.
    const auto sent =
        run_writer(limiter, now, 2000, limiter.max_batch_bytes(), scheduler_like);
    const double achieved = long_run_rate(sent, burst) / rate;
    // Without catch-up the lateness would cost 3.6 %; only the last 1 ms (at the very
    // end) cannot be made up.
    EXPECT_NEAR(achieved, 1.0, 0.005) << "achieved/target " << achieved;
}

TEST(RateLimiter, CatchingUpNeverBurstsAbovePeakRate)
{
    auto now = clock_type::time_point() + 1s;
    rate_limiter limiter(rate, burst, rate_limiter::default_catch_up_ratio, now);
    for (const auto lateness : { scheduler_like, preempted }) {
        auto t = now;
        rate_limiter other(rate, burst, rate_limiter::default_catch_up_ratio, t);
        const auto run = run_writer(other, t, 1500, other.max_batch_bytes(), lateness);
        // Time lost is repaid at 5 % above the rate, never as a burst above burst_size.
        EXPECT_LE(
            worst_peak_excess(run, burst, rate * rate_limiter::default_catch_up_ratio),
            1.0);
    }
    const auto sent =
        run_writer(limiter, now, 1500, limiter.max_batch_bytes(), preempted);
    // ... so after a preemption the sender stays above the rate for a while.
    bool caught_up_above_rate = false;
    for (std::size_t i = 1; i + 20 < sent.size(); i++)
        if (sent[i].when - sent[i - 1].when >= 20ms) {
            const double bytes = 20.0 * double(sent[i].bytes);
            const double r = bytes / seconds(sent[i + 20].when - sent[i].when);
            caught_up_above_rate = caught_up_above_rate || r > rate * 1.02;
        }
    EXPECT_TRUE(caught_up_above_rate);
}

TEST(RateLimiter, IdleTimeIsNeverCaughtUp)
{
    auto now = clock_type::time_point() + 1s;
    rate_limiter limiter(rate, burst, rate_limiter::default_catch_up_ratio, now);
    run_writer(limiter, now, 100, limiter.max_batch_bytes(), on_time);
    limiter.note_idle();
    now += 300ms; // 30 MB worth of idle time
    const auto resumed = now;
    const auto sent = run_writer(limiter, now, 100, limiter.max_batch_bytes(), on_time);
    double at_once = 0;
    for (const auto& s : sent)
        if (s.when == resumed)
            at_once += double(s.bytes);
    EXPECT_EQ(at_once, burst); // one burst, then paced
    EXPECT_NEAR(long_run_rate(sent, burst) / rate, 1.0, 1e-3);
}

TEST(RateLimiter, BatchLargerThanABurstLeavesDebtThatHoldsTheRate)
{
    auto now = clock_type::time_point() + 1s;
    rate_limiter limiter(rate, burst, rate_limiter::default_catch_up_ratio, now);
    const auto sent = run_writer(limiter, now, 200, 1 << 20, on_time); // 1 MiB batches
    // Each batch waits for the 1 MiB it took before: 10.5 ms apart at 100 MB/s.
    EXPECT_NEAR(seconds(sent[10].when - sent[9].when), double(1 << 20) / rate, 1e-6);
    double bytes = 0;
    for (const auto& s : sent)
        bytes += double(s.bytes);
    EXPECT_NEAR((bytes - double(1 << 20)) /
                    seconds(sent.back().when - sent.front().when) / rate,
                1.0,
                1e-3);
}

TEST(RateLimiter, BackloggedWriterWaitsOncePerBurstAtTheSameRate)
{
    // A writer with more to send than a batch waits until a whole burst may go, and
    // then sends its batches of that burst back to back: half the wake-ups of a writer
    // that waits for each half-burst batch, at the same long-run and peak rates.
    for (const bool backlogged : { false, true }) {
        auto now = clock_type::time_point() + 1s;
        rate_limiter limiter(rate, burst, rate_limiter::default_catch_up_ratio, now);
        const auto sent = run_writer(
            limiter, now, 1000, limiter.max_batch_bytes(), on_time, backlogged);
        // The first burst (two batches) leaves at once.
        EXPECT_EQ(waits_of(sent), backlogged ? 499u : 998u)
            << "backlogged " << backlogged;
        EXPECT_NEAR(long_run_rate(sent, burst) / rate, 1.0, 1e-4);
        EXPECT_LE(worst_peak_excess(sent, burst, rate), 1.0);
    }
}

TEST(RateLimiter, BackloggedWriterMakesUpLateWakeUpsWithinThePeakRate)
{
    for (const auto lateness : { scheduler_like, preempted }) {
        auto now = clock_type::time_point() + 1s;
        rate_limiter limiter(rate, burst, rate_limiter::default_catch_up_ratio, now);
        const auto sent =
            run_writer(limiter, now, 2000, limiter.max_batch_bytes(), lateness, true);
        EXPECT_LE(
            worst_peak_excess(sent, burst, rate * rate_limiter::default_catch_up_ratio),
            1.0);
        if (lateness == scheduler_like) {
            const double achieved = long_run_rate(sent, burst) / rate;
            EXPECT_NEAR(achieved, 1.0, 0.005) << "achieved/target " << achieved;
        }
    }
}

TEST(WakeMargin, SettlesAtTheNinetiethPercentileOfLateness)
{
    // Lateness spread evenly over 0-50 us (a fixed pseudo-random sequence): 90 % of
    // sleeps wake within 45 us.
    wake_margin margin;
    std::uint32_t x = 12345;
    std::vector<double> tail;
    for (int i = 0; i < 40000; i++) {
        x = x * 1664525u + 1013904223u;
        margin.sampled(std::chrono::nanoseconds(x % 50000));
        if (i >= 30000)
            tail.push_back(
                std::chrono::duration<double, std::micro>(margin.get()).count());
    }
    // It wanders by a few steps about the percentile: its median is there, and 8 in 10
    // of its values within 5 us of it.
    std::sort(tail.begin(), tail.end());
    EXPECT_NEAR(tail[tail.size() / 2], 45.0, 2.0);
    EXPECT_GT(tail[tail.size() / 10], 40.0);
    EXPECT_LT(tail[tail.size() * 9 / 10], 50.0);
}

TEST(WakeMargin, ComesDownWhenEveryWaitIsShorterThanIt)
{
    wake_margin margin;
    for (int i = 0; i < 200; i++)
        margin.sampled(1ms); // a burst of late wake-ups pushes it up...
    EXPECT_GE(margin.get(), 300us);
    const auto high = margin.get();
    for (int i = 0; i < 1000; i++)
        margin.unsampled(); // ...and waits spun whole bring it down, slowly
    EXPECT_LT(margin.get(), high);
    EXPECT_GT(margin.get(), high - 100us);
    for (int i = 0; i < 100000; i++)
        margin.unsampled();
    EXPECT_EQ(margin.get(), wake_margin::min);
}

TEST(WakeMargin, StaysWithinItsBounds)
{
    wake_margin margin;
    EXPECT_EQ(margin.get(), wake_margin::initial);
    for (int i = 0; i < 10000; i++)
        margin.sampled(1s);
    EXPECT_EQ(margin.get(), wake_margin::max);
    for (int i = 0; i < 10000; i++)
        margin.sampled(0ns);
    EXPECT_EQ(margin.get(), wake_margin::min);
}
