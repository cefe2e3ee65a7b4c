/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/timeline.h"
#include <limits>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

namespace {
/*! Bounds the window: its memory is window × heap size × substreams. */
constexpr std::size_t max_window_heaps = std::size_t(1) << 20;
constexpr std::size_t max_substreams = 1024;
} // namespace

void timeline_config::validate() const
{
    if (timestamp_step == 0)
        throw std::invalid_argument(
            "timestamp_step: 0 is not a step; give the timestamp increase from one heap "
            "to the next (0 at the block means the items per heap)");
    if (window_heaps == 0 || window_heaps > max_window_heaps)
        throw std::invalid_argument("window_heaps: " + std::to_string(window_heaps) +
                                    " is out of range; use 1 to " +
                                    std::to_string(max_window_heaps) +
                                    " (64 covers most reordering)");
    if (substreams == 0 || substreams > max_substreams)
        throw std::invalid_argument("substreams: " + std::to_string(substreams) +
                                    " is out of range; use 1 to " +
                                    std::to_string(max_substreams));
}

timeline::timeline(const timeline_config& config, release_fn release)
    : d_config((config.validate(), config)),
      d_release(std::move(release)),
      d_states(config.window_heaps * config.substreams, state::empty),
      d_fills(config.substreams, fill::missing)
{
}

void timeline::start_epoch(std::uint64_t timestamp)
{
    d_started = true;
    d_discontinuity = true;
    d_origin = timestamp;
    d_front = 0;
    d_end = 0;
}

timeline::location timeline::locate(std::uint64_t timestamp) const
{
    location loc;
    const std::uint64_t step = d_config.timestamp_step;
    const std::uint64_t window = d_config.window_heaps;
    // Distances in positions, without overflow whichever side of the origin it lies.
    const bool ahead = timestamp >= d_origin;
    const std::uint64_t distance = ahead ? timestamp - d_origin : d_origin - timestamp;
    if (distance % step != 0) {
        loc.misaligned = true;
        return loc;
    }
    const std::uint64_t k = distance / step;
    // Positions the heap lies behind the front; 0 when at or ahead of it. Before
    // position 0 counts as behind: the stream began after it.
    const std::uint64_t behind = !ahead ? k + d_front : k < d_front ? d_front - k : 0;
    // A window or more behind, or more than a window beyond the window's end.
    loc.resync = behind > window || (behind == 0 && k - d_front >= 2 * window);
    loc.late = behind > 0 && !loc.resync;
    loc.position = k;
    return loc;
}

bool timeline::forces_release(std::uint64_t timestamp) const
{
    if (!d_started)
        return false;
    const location loc = locate(timestamp);
    return !loc.misaligned && !loc.late &&
           (loc.resync || loc.position >= d_front + d_config.window_heaps);
}

timeline::placement timeline::place(std::uint64_t timestamp, std::size_t substream)
{
    placement p{ placement::verdict::placed };
    if (substream >= d_config.substreams) {
        d_stats.heaps_bad_substream++;
        p.what = placement::verdict::bad_substream;
        return p;
    }
    if (!d_started)
        start_epoch(timestamp);
    const std::uint64_t window = d_config.window_heaps;
    const location loc = locate(timestamp);
    if (loc.misaligned) {
        d_stats.heaps_misaligned++;
        p.what = placement::verdict::misaligned;
        return p;
    }
    if (loc.late) {
        d_stats.heaps_late++;
        p.what = placement::verdict::late;
        return p;
    }
    std::uint64_t position = loc.position;
    if (loc.resync) {
        d_stats.timestamp_resyncs++;
        flush();
        start_epoch(timestamp);
        d_epoch++;
        position = 0;
    } else if (position >= d_front + window) {
        release_until(position - window + 1);
        release_complete_front();
    }
    const std::size_t slot = std::size_t(position % window);
    state& s = at(slot, substream);
    if (s != state::empty) {
        d_stats.heaps_duplicate++;
        p.what = placement::verdict::duplicate;
        return p;
    }
    s = state::filling;
    d_stats.heaps_placed++;
    if (position >= d_end)
        d_end = position + 1;
    p.position = position;
    // The front and the output count advance together within an epoch.
    p.output_index = d_output - d_front + position;
    p.slot = slot;
    p.epoch = d_epoch;
    return p;
}

void timeline::complete(const placement& where, std::size_t substream)
{
    if (where.what != placement::verdict::placed || where.epoch != d_epoch ||
        substream >= d_config.substreams || where.position < d_front)
        return; // never placed, or released already (as incomplete)
    at(where.slot, substream) = state::complete;
    if (where.position == d_front)
        release_complete_front();
}

void timeline::release_complete_front()
{
    while (d_front < d_end) {
        const std::size_t slot = std::size_t(d_front % d_config.window_heaps);
        for (std::size_t i = 0; i < d_config.substreams; i++)
            if (at(slot, i) != state::complete)
                return;
        release_front();
    }
}

void timeline::release_until(std::uint64_t position)
{
    while (d_front < position)
        release_front();
}

void timeline::release_front()
{
    const std::size_t slot = std::size_t(d_front % d_config.window_heaps);
    for (std::size_t i = 0; i < d_config.substreams; i++) {
        state& s = at(slot, i);
        d_fills[i] = s == state::complete  ? fill::complete
                     : s == state::filling ? fill::incomplete
                                           : fill::missing;
        if (s == state::empty)
            d_stats.heaps_missing++;
        s = state::empty;
    }
    released r;
    r.output_index = d_output;
    r.timestamp = d_origin + d_front * d_config.timestamp_step;
    r.slot = slot;
    r.discontinuity = d_discontinuity;
    r.fills = d_fills.data();
    d_discontinuity = false;
    d_front++;
    d_output++;
    d_stats.positions_released++;
    d_release(r);
    // Released past every placed position (the window moved on): nothing is placed
    // before the front.
    if (d_end < d_front)
        d_end = d_front;
}

void timeline::flush() { release_until(d_end); }

} // namespace spead
} // namespace gr
