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

rate_limiter::rate_limiter(double rate, double burst)
    : d_rate(rate), d_burst(burst), d_tokens(burst), d_last(clock::now())
{
}

std::size_t rate_limiter::max_batch_bytes() const
{
    return std::max<std::size_t>(1, static_cast<std::size_t>(d_burst / 2));
}

void rate_limiter::refill(clock::time_point now)
{
    const double elapsed = std::chrono::duration<double>(now - d_last).count();
    d_tokens = std::min(d_burst, d_tokens + elapsed * d_rate);
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
    refill(clock::now());
    // A batch larger than the bucket waits for a full bucket and leaves it in debt, so
    // the long-run rate still holds.
    const double needed = std::min(static_cast<double>(bytes), d_burst);
    bool waited = false;
    if (d_tokens < needed) {
        const auto wait = std::chrono::duration<double>((needed - d_tokens) / d_rate);
        wait_until(d_last + std::chrono::duration_cast<clock::duration>(wait) +
                   clock::duration(1));
        refill(clock::now());
        waited = true;
    }
    d_tokens -= static_cast<double>(bytes);
    return waited;
}

} // namespace send
} // namespace spead
} // namespace gr
