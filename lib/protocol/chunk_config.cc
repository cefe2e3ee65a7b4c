/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/chunk_config.h"
#include <gnuradio/spead/substream_set.h>
#include <algorithm>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

namespace {
/*! Bounds the window's memory (window × substreams × heap size). */
constexpr std::uint64_t max_window_bytes = std::uint64_t(16) << 30;
} // namespace

void chunk_config::validate() const
{
    timeline.validate();
    if (heap_bytes == 0)
        throw std::invalid_argument(
            "heap_bytes: 0 is not a heap size; give the HEAP_SIZE of the data heaps "
            "(items per heap × item size)");
    if (timestamp_item == 0)
        throw std::invalid_argument("timestamp_item: 0 names no item; give the id of "
                                    "the immediate item holding each heap's timestamp");
    if (substream_item == timestamp_item)
        throw std::invalid_argument(
            "substream_item: " + std::to_string(substream_item) +
            " is the timestamp item too; give another id, or 0 for no substreams");
    substream_set::choose(
        first_substream, substream_ids, timeline.substreams, substream_item);
    if (chunk_positions > timeline.window_heaps)
        throw std::invalid_argument(
            "chunk_positions: " + std::to_string(chunk_positions) +
            " is more than the window (" + std::to_string(timeline.window_heaps) +
            " heaps); use 0 (automatic) or at most the window");
    if (incomplete != recv::incomplete_heaps::drop &&
        incomplete != recv::incomplete_heaps::deliver)
        throw std::invalid_argument("incomplete: unknown policy; use drop or deliver");
    const std::uint64_t heaps =
        std::uint64_t(timeline.window_heaps) * timeline.substreams;
    if (heap_bytes > max_window_bytes / heaps)
        throw std::invalid_argument(
            "window_heaps: " + std::to_string(timeline.window_heaps) + " heaps × " +
            std::to_string(timeline.substreams) + " substreams × " +
            std::to_string(heap_bytes) + " bytes is more than " +
            std::to_string(max_window_bytes >> 30) +
            " GiB of window; use fewer heaps in the window or smaller heaps");
}

std::size_t chunk_config::positions_per_chunk() const
{
    if (chunk_positions != 0)
        return chunk_positions;
    // About 1 MiB per substream: one memcpy per output and chunk, few hand-overs. At
    // most a quarter of the window, so the chunks live at once hold little more than
    // the window itself.
    constexpr std::size_t target_bytes = std::size_t(1) << 20;
    const std::size_t by_size = std::max<std::size_t>(1, target_bytes / heap_bytes);
    const std::size_t by_window = std::max<std::size_t>(1, timeline.window_heaps / 4);
    return std::min(by_size, by_window);
}

std::size_t chunk_config::live_chunks() const
{
    const std::size_t positions = positions_per_chunk();
    return (timeline.window_heaps + positions - 1) / positions + 1;
}

} // namespace spead
} // namespace gr
