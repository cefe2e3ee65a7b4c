/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rate_limiter.h"
#include "spin_pause.h"
#include <algorithm>
#include <thread>

namespace gr {
namespace spead {
namespace send {

namespace {
constexpr double margin_quantile = 0.9;
constexpr double unsampled_fraction = 0.01;
} // namespace

void wake_margin::sampled(duration lateness)
{
    move(lateness > d_margin ? margin_quantile : margin_quantile - 1.0);
}

void wake_margin::unsampled() { move(-unsampled_fraction); }

void wake_margin::move(double steps)
{
    const auto by = std::chrono::duration_cast<duration>(
        std::chrono::duration<double, std::micro>(step) * steps);
    d_margin = std::clamp<duration>(d_margin + by, min, max);
}

rate_limiter::rate_limiter(double rate,
                           double burst,
                           double catch_up_ratio,
                           clock::time_point start)
    : d_rate(rate),
      d_peak_rate(rate * std::max(1.0, catch_up_ratio)),
      d_burst(burst),
      d_average_tokens(burst),
      d_peak_tokens(burst),
      d_last(start)
{
}

std::size_t rate_limiter::max_batch_bytes() const
{
    return std::max<std::size_t>(1, static_cast<std::size_t>(d_burst / 2));
}

void rate_limiter::refill(clock::time_point now)
{
    const double elapsed = std::chrono::duration<double>(now - d_last).count();
    d_average_tokens += elapsed * d_rate;
    if (d_idle)
        d_average_tokens = std::min(d_average_tokens, d_burst); // no catch-up for idling
    d_peak_tokens = std::min(d_burst, d_peak_tokens + elapsed * d_peak_rate);
    d_last = now;
}

void rate_limiter::wait_until(clock::time_point deadline)
{
    // Sleep through all but the margin, then spin to the deadline; a wait no longer
    // than the margin is spun whole. The spin pauses rather than yields: a yield gives
    // a busy core away for a whole time slice (spead_send --rate 5 beside two nice-19
    // busy loops sent 3.4 Gb/s when it yielded, 4.98 now).
    auto now = clock::now();
    const auto margin = d_wake_margin.get();
    if (deadline - now > margin) {
        const auto target = deadline - margin;
        std::this_thread::sleep_until(target);
        now = clock::now();
        d_wake_margin.sampled(now - target);
    } else {
        d_wake_margin.unsampled();
    }
    while (now < deadline) {
        spin_pause();
        now = clock::now();
    }
}

bool rate_limiter::acquire(std::size_t bytes, bool backlogged)
{
    auto now = clock::now();
    const auto when = earliest(bytes, now, backlogged);
    const bool waited = when > now;
    if (waited) {
        wait_until(when);
        now = clock::now(); // late, often: the time lost adds tokens, and is made up
    }
    take(bytes, now);
    return waited;
}

rate_limiter::clock::time_point
rate_limiter::earliest(std::size_t bytes, clock::time_point now, bool backlogged)
{
    refill(now);
    d_idle = false;
    // A batch larger than a burst waits for full buckets and leaves them in debt, so
    // the long-run rate still holds.
    double needed = std::min(static_cast<double>(bytes), d_burst);
    if (d_average_tokens >= needed && d_peak_tokens >= needed)
        return now;
    if (backlogged)
        needed = d_burst; // wait once for this batch and the next ones of the burst
    const double seconds = std::max((needed - d_average_tokens) / d_rate,
                                    (needed - d_peak_tokens) / d_peak_rate);
    return now +
           std::chrono::duration_cast<clock::duration>(
               std::chrono::duration<double>(seconds)) +
           clock::duration(1);
}

void rate_limiter::take(std::size_t bytes, clock::time_point now)
{
    refill(now);
    d_average_tokens -= static_cast<double>(bytes);
    d_peak_tokens -= static_cast<double>(bytes);
}

} // namespace send
} // namespace spead
} // namespace gr
