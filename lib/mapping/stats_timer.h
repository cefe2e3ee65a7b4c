/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_STATS_TIMER_H
#define INCLUDED_SPEAD_MAPPING_STATS_TIMER_H

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

/*! Checks a block's stats_interval option: seconds, >= 0 (0: no messages).
 * \throws std::invalid_argument naming stats_interval */
inline void check_stats_interval(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0)
        throw std::invalid_argument(
            "stats_interval: " + std::to_string(seconds) +
            " is not a duration; give seconds between stats messages, >= 0 (0: none)");
}

/*! When a block's next `stats` message is due (its stats_interval parameter). */
class stats_timer
{
public:
    /*! \p interval between messages; zero: none. */
    explicit stats_timer(std::chrono::duration<double> interval = {})
        : d_interval(std::chrono::duration_cast<clock::duration>(interval))
    {
    }

    bool enabled() const { return d_interval.count() > 0; }
    /*! The first message is due at once (at start()). */
    void reset() { d_next = clock::now(); }
    /*! True when a message should go out now (always when \p force, if enabled);
     * then the next one is due an interval later. */
    bool due(bool force)
    {
        if (!enabled())
            return false;
        const auto now = clock::now();
        if (!force && now < d_next)
            return false;
        d_next = now + d_interval;
        return true;
    }

private:
    using clock = std::chrono::steady_clock;
    clock::duration d_interval;
    clock::time_point d_next = clock::now();
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_STATS_TIMER_H */
