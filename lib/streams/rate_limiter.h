/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_RATE_LIMITER_H
#define INCLUDED_SPEAD_STREAMS_RATE_LIMITER_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_stream_config.h>
#include <chrono>
#include <cstddef>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief How late this thread's sleeps wake up: a running estimate of the 90th
 * percentile, so that a wait is slept until this much before its end and the rest is
 * spun. Each sleep that wakes later than the margin raises it by 0.9 step, each that
 * wakes within it lowers it by 0.1 step, so it settles where 1 sleep in 10 is later.
 * A wait too short to sleep gives no sample; it lowers the margin by a hundredth of a
 * step, so that a margin raised above every wait comes down to try sleeping again (at
 * most about one wait in 90 then wakes late, which catching up repays).
 */
class SPEAD_API wake_margin
{
public:
    using duration = std::chrono::steady_clock::duration;

    /*! A virtual machine's timer, with the writer's 1 us timer slack, wakes 20-30 us
     * late; bare metal a few us. */
    static constexpr auto initial = std::chrono::microseconds(30);
    static constexpr auto step = std::chrono::microseconds(2);
    static constexpr auto min = std::chrono::microseconds(1);
    static constexpr auto max = std::chrono::milliseconds(1);

    duration get() const { return d_margin; }
    /*! A sleep woke up \p lateness after the time it asked for. */
    void sampled(duration lateness);
    /*! A wait no longer than the margin was spun whole. */
    void unsampled();

private:
    void move(double steps);

    duration d_margin = initial;
};

/*!
 * \brief Paces the writer with two token buckets (bytes):
 * - the average bucket fills at \p rate. While the writer has work it is not capped,
 *   so time lost to a late wake-up or to the scheduler is made up and the long-run
 *   rate is the one asked for; when the writer runs out of work (note_idle()) it is
 *   capped at one burst, so idle time is never caught up;
 * - the peak bucket fills at rate × \p catch_up_ratio and is always capped at one
 *   burst: catching up happens at that slightly higher rate, never as a burst larger
 *   than burst_size.
 * A batch waits until both buckets hold its size (at most one burst), or, when the
 * writer has more to send after it, a whole burst.
 */
class SPEAD_API rate_limiter
{
public:
    using clock = std::chrono::steady_clock;

    /*! spead2's burst_rate_ratio default: catching up runs 5 % above the rate. */
    static constexpr double default_catch_up_ratio =
        stream_config::default_burst_rate_ratio;

    /*! \param rate bytes per second, > 0 \param burst bytes, > 0
     * \param catch_up_ratio peak rate / rate, >= 1 */
    rate_limiter(double rate,
                 double burst,
                 double catch_up_ratio = default_catch_up_ratio,
                 clock::time_point start = clock::now());

    /*! Largest batch the writer should hand over at once, bytes: half a burst leaves
     * the peak bucket room to absorb a late wake-up. */
    std::size_t max_batch_bytes() const;

    /*! Waits until \p bytes may go out and takes them from the buckets.
     * \p backlogged: the writer has more than this batch to send (see earliest()).
     * \return true if it had to wait. */
    bool acquire(std::size_t bytes, bool backlogged = false);

    /*! acquire() without the clock, in two steps, so tests can drive it with a
     * simulated one (late wake-ups included). Times passed in must not go backwards.
     * earliest(): when \p bytes may go out if it is \p now (\p now itself when they
     * may go at once); takes nothing. A \p backlogged writer that has to wait waits
     * until both buckets hold a whole burst, so that it wakes once per burst, not once
     * per batch, as spead2's writer sleeps once per burst. */
    clock::time_point
    earliest(std::size_t bytes, clock::time_point now, bool backlogged = false);
    /*! \p bytes went out at \p now (no earlier than earliest() said): take them. */
    void take(std::size_t bytes, clock::time_point now);

    /*! The writer has nothing to send: the time until the next acquire() is idle. */
    void note_idle() { d_idle = true; }

private:
    void refill(clock::time_point now);
    void wait_until(clock::time_point deadline);

    double d_rate;
    double d_peak_rate;
    double d_burst;
    double d_average_tokens;
    double d_peak_tokens;
    bool d_idle = true;
    clock::time_point d_last;
    wake_margin d_wake_margin;
};

} // namespace send
} // namespace spead
} // namespace gr

#endif
