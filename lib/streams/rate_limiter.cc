/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rate_limiter.h"
#include <algorithm>
#include <thread>

namespace gr {
namespace spead {
namespace send {

namespace {
// Waits shorter than this are spun (a sleep would overshoot them by more than their
// length); longer ones sleep, and only their last stretch is spun.
constexpr auto spin_threshold = std::chrono::microseconds(30);
constexpr auto spin_margin = std::chrono::microseconds(10);
} // namespace

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
    auto now = clock::now();
    if (deadline - now > spin_threshold) {
        std::this_thread::sleep_until(deadline - spin_margin);
        now = clock::now();
    }
    while (now < deadline) {
        std::this_thread::yield();
        now = clock::now();
    }
}

bool rate_limiter::acquire(std::size_t bytes)
{
    auto now = clock::now();
    const auto when = earliest(bytes, now);
    const bool waited = when > now;
    if (waited) {
        wait_until(when);
        now = clock::now(); // late, often: the time lost adds tokens, and is made up
    }
    take(bytes, now);
    return waited;
}

rate_limiter::clock::time_point rate_limiter::earliest(std::size_t bytes,
                                                       clock::time_point now)
{
    refill(now);
    d_idle = false;
    // A batch larger than a burst waits for full buckets and leaves them in debt, so
    // the long-run rate still holds.
    const double needed = std::min(static_cast<double>(bytes), d_burst);
    if (d_average_tokens >= needed && d_peak_tokens >= needed)
        return now;
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
