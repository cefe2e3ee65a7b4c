/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_METRICS_PROGRESS_LINE_H
#define INCLUDED_SPEAD_METRICS_PROGRESS_LINE_H

/* The tools' live line (--progress SECONDS): what a stream did since the last line,
 * read from its stats snapshot and the heaps the tool took, one line per interval. */

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/stats.h>
#include <condition_variable>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>
#include <thread>

namespace gr {
namespace spead {
namespace metrics {

/*! Running totals a progress line reports the increase of. */
struct progress_totals {
    std::uint64_t heaps = 0;
    std::uint64_t bytes = 0;   //!< payload (receive) or packet (send) bytes
    std::uint64_t dropped = 0; //!< discarded for want of room
    std::uint64_t lost = 0;    //!< heaps that did not get through whole
};

/*! A receiver's drops: datagrams, runs, frames, heaps and packets discarded because a
 * socket buffer, the NIC's ring or the heap queue was full (the *_dropped_* counters
 * of docs/statistics.md). */
SPEAD_API std::uint64_t receive_dropped(const recv_stats& s);
/*! Heaps that did not reach the consumer whole: incomplete heaps (evicted or
 * flushed); in a continuous stream, positions output as zeros or partly received
 * (heaps_missing + incomplete_heaps_delivered). */
SPEAD_API std::uint64_t receive_lost(const recv_stats& s);
/*! A sender's totals: heaps and bytes sent, heaps refused for a full queue, heaps
 * failed. */
SPEAD_API progress_totals send_progress(const send_stats& s);

/*! Turns successive totals into lines: "TOOL: 1.00 s: 1234 heaps, 9.871 Gb/s,
 * 0 dropped, 0 lost", each counting what changed since the previous one. */
class SPEAD_API progress_line
{
public:
    using clock = std::chrono::steady_clock;

    progress_line(std::string tool, const progress_totals& start, clock::time_point at);
    /*! \p now differs from the totals of the last line. */
    bool differs(const progress_totals& now) const;
    /*! The line for [last call, \p at], and \p now becomes the start of the next. */
    std::string next(const progress_totals& now, clock::time_point at);

private:
    std::string d_tool;
    progress_totals d_last;
    clock::time_point d_last_at;
};

/*!
 * \brief A thread that writes a progress_line of \p sample() to \p out every \p
 * seconds, until destroyed; then it writes the last, partial interval's line too
 * when something changed in it (so the lines add up to the totals) or it is at least
 * a tenth of an interval long.
 */
class SPEAD_API progress_reporter
{
public:
    /*! \throws std::invalid_argument naming \p option when \p seconds is not > 0 */
    progress_reporter(const std::string& tool,
                      double seconds,
                      std::function<progress_totals()> sample,
                      std::ostream& out,
                      const std::string& option = "--progress");
    ~progress_reporter();
    progress_reporter(const progress_reporter&) = delete;
    progress_reporter& operator=(const progress_reporter&) = delete;

private:
    void run();

    progress_line::clock::duration d_interval;
    std::function<progress_totals()> d_sample;
    std::ostream& d_out;
    progress_line d_line;
    std::mutex d_mutex;
    std::condition_variable d_wake;
    bool d_stop = false;
    std::thread d_thread; // last: started once the rest exists
};

} // namespace metrics
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_METRICS_PROGRESS_LINE_H */
