/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "interval_set.h"
#include <algorithm>

namespace gr {
namespace spead {

interval_set::insert_result
interval_set::insert_slow(std::uint64_t begin, std::uint64_t end, std::size_t max_ranges)
{
    // First range that ends after begin: the only one that can contain or overlap
    // [begin, end) from the left.
    auto it = std::upper_bound(
        d_ranges.begin(), d_ranges.end(), begin, [](std::uint64_t value, const range& r) {
            return value < r.end;
        });
    if (it != d_ranges.end() && it->begin < end) {
        if (it->begin <= begin && end <= it->end)
            return insert_result::duplicate;
        return insert_result::overlap;
    }
    // [begin, end) lies in the gap before *it (or after the last range).
    const bool joins_left = it != d_ranges.begin() && std::prev(it)->end == begin;
    const bool joins_right = it != d_ranges.end() && it->begin == end;
    if (joins_left && joins_right) {
        std::prev(it)->end = it->end;
        d_ranges.erase(it);
    } else if (joins_left) {
        std::prev(it)->end = end;
    } else if (joins_right) {
        it->begin = begin;
    } else {
        if (d_ranges.size() >= max_ranges)
            return insert_result::too_many;
        d_ranges.insert(it, range{ begin, end });
    }
    return insert_result::added;
}

} // namespace spead
} // namespace gr
