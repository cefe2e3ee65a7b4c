/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "metrics/progress_line.h"
#include <cmath>
#include <cstdio>
#include <ostream>
#include <stdexcept>

namespace gr {
namespace spead {
namespace metrics {

std::uint64_t receive_dropped(const recv_stats& s)
{
    return s[recv_stat::packets_dropped_socket_overflow] +
           s[recv_stat::runs_dropped_socket_overflow] +
           s[recv_stat::frames_dropped_no_buffer] +
           s[recv_stat::heaps_dropped_queue_full] +
           s[recv_stat::packets_dropped_queue_full];
}

std::uint64_t receive_lost(const recv_stats& s)
{
    // A continuous stream accounts for every position it output; an evicted heap is
    // then among the zeros or the partly received ones already.
    if (s[recv_stat::positions_released] > 0)
        return s[recv_stat::heaps_missing] + s[recv_stat::incomplete_heaps_delivered];
    return s[recv_stat::incomplete_heaps_evicted] +
           s[recv_stat::incomplete_heaps_flushed];
}

progress_totals send_progress(const send_stats& s)
{
    return { s[send_stat::heaps],
             s[send_stat::bytes],
             s[send_stat::heaps_rejected_queue_full],
             s[send_stat::heaps_failed] };
}

progress_line::progress_line(std::string tool,
                             const progress_totals& start,
                             clock::time_point at)
    : d_tool(std::move(tool)), d_last(start), d_last_at(at)
{
}

bool progress_line::differs(const progress_totals& now) const
{
    return now.heaps != d_last.heaps || now.bytes != d_last.bytes ||
           now.dropped != d_last.dropped || now.lost != d_last.lost;
}

std::string progress_line::next(const progress_totals& now, clock::time_point at)
{
    // Totals only grow; a stream replaced meanwhile (a restart) counts from zero.
    const auto since = [](std::uint64_t a, std::uint64_t b) {
        return a >= b ? a - b : a;
    };
    const double seconds = std::chrono::duration<double>(at - d_last_at).count();
    const std::uint64_t bytes = since(now.bytes, d_last.bytes);
    const double gbps = seconds > 0 ? bytes * 8e-9 / seconds : 0.0;
    char line[256];
    std::snprintf(line,
                  sizeof(line),
                  "%s: %.2f s: %llu heaps, %.3f Gb/s, %llu dropped, %llu lost",
                  d_tool.c_str(),
                  seconds,
                  static_cast<unsigned long long>(since(now.heaps, d_last.heaps)),
                  gbps,
                  static_cast<unsigned long long>(since(now.dropped, d_last.dropped)),
                  static_cast<unsigned long long>(since(now.lost, d_last.lost)));
    d_last = now;
    d_last_at = at;
    return line;
}

namespace {
progress_line::clock::duration checked_interval(double seconds, const std::string& option)
{
    if (!std::isfinite(seconds) || seconds <= 0)
        throw std::invalid_argument(option + ": " + std::to_string(seconds) +
                                    " is not an interval; give the seconds between "
                                    "progress lines, > 0 (e.g. 1)");
    return std::chrono::duration_cast<progress_line::clock::duration>(
        std::chrono::duration<double>(seconds));
}
} // namespace

progress_reporter::progress_reporter(const std::string& tool,
                                     double seconds,
                                     std::function<progress_totals()> sample,
                                     std::ostream& out,
                                     const std::string& option)
    : d_interval(checked_interval(seconds, option)),
      d_sample(std::move(sample)),
      d_out(out),
      d_line(tool, d_sample(), progress_line::clock::now()),
      d_thread([this] { run(); })
{
}

progress_reporter::~progress_reporter()
{
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_stop = true;
    }
    d_wake.notify_all();
    d_thread.join();
}

void progress_reporter::run()
{
    using clock = progress_line::clock;
    auto due = clock::now() + d_interval;
    std::unique_lock<std::mutex> lock(d_mutex);
    for (;;) {
        const bool stopping = d_wake.wait_until(lock, due, [this] { return d_stop; });
        const auto now = clock::now();
        lock.unlock();
        const progress_totals totals = d_sample();
        // The last, partial interval: a line when something happened in it (the
        // lines then add up to the totals) or when it is more than a sliver.
        if (stopping && !d_line.differs(totals) &&
            now - (due - d_interval) < d_interval / 10)
            return;
        d_out << d_line.next(totals, now) << std::endl;
        lock.lock();
        if (stopping)
            return;
        due += d_interval;
        if (due < now) // fell behind (a stalled terminal): no burst of lines
            due = now + d_interval;
    }
}

} // namespace metrics
} // namespace spead
} // namespace gr
