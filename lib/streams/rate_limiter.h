/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_RATE_LIMITER_H
#define INCLUDED_SPEAD_STREAMS_RATE_LIMITER_H

#include <chrono>
#include <cstddef>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Token bucket pacing the writer: tokens (bytes) accrue at \p rate per second up
 * to one burst, and a batch waits until the bucket holds its size.
 *
 * Capping the bucket at one burst is what prevents catch-up: after an idle spell the
 * writer may send one burst back-to-back, never the backlog of the idle time. Tokens
 * accrue by the real clock, so a sleep that overshoots costs nothing as long as the
 * bucket does not overflow meanwhile; batches of at most half a burst leave that room.
 */
class rate_limiter
{
public:
    using clock = std::chrono::steady_clock;

    /*! \param rate bytes per second, > 0 \param burst bytes, > 0 */
    rate_limiter(double rate, double burst);

    /*! Largest batch the writer should hand over at once, bytes. */
    std::size_t max_batch_bytes() const;

    /*! Waits until \p bytes may go out and takes them from the bucket.
     * \return true if it had to wait. */
    bool acquire(std::size_t bytes);

private:
    void refill(clock::time_point now);
    static void wait_until(clock::time_point deadline);

    double d_rate;
    double d_burst;
    double d_tokens;
    clock::time_point d_last;
};

} // namespace send
} // namespace spead
} // namespace gr

#endif
