/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_INTERVAL_SET_H
#define INCLUDED_SPEAD_PROTOCOL_INTERVAL_SET_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief The byte ranges of a heap received so far, kept sorted and coalesced, so a
 * heap that arrives in order is one range that grows at its end (O(1) per packet).
 *
 * The vector keeps its capacity across heaps (the storage is pooled), so steady-state
 * use allocates nothing.
 */
class SPEAD_API interval_set
{
public:
    struct range {
        std::uint64_t begin;
        std::uint64_t end;
    };

    enum class insert_result { added, duplicate, overlap, too_many };

    /*! Adds [begin, end) (begin < end). Fails with duplicate when the range is already
     * covered, overlap when it is partly covered, too_many when it would need more than
     * \p max_ranges separate ranges. Nothing changes unless the result is added. */
    insert_result insert(std::uint64_t begin, std::uint64_t end, std::size_t max_ranges)
    {
        if (d_ranges.empty()) {
            d_ranges.push_back({ begin, end });
            return insert_result::added;
        }
        range& last = d_ranges.back();
        if (begin >= last.end) { // the in-order case
            if (begin == last.end) {
                last.end = end;
                return insert_result::added;
            }
            if (d_ranges.size() >= max_ranges)
                return insert_result::too_many;
            d_ranges.push_back({ begin, end });
            return insert_result::added;
        }
        return insert_slow(begin, end, max_ranges);
    }

    /*! The in-order case alone: extends the last range when \p begin is its end.
     * \return false (and changes nothing) otherwise. */
    bool extend_last(std::uint64_t begin, std::uint64_t end)
    {
        if (d_ranges.empty() || d_ranges.back().end != begin)
            return false;
        d_ranges.back().end = end;
        return true;
    }

    /*! Where the last range ends; 0 when there is none. */
    std::uint64_t last_end() const { return d_ranges.empty() ? 0 : d_ranges.back().end; }

    void clear() { d_ranges.clear(); }
    bool empty() const { return d_ranges.empty(); }
    std::size_t size() const { return d_ranges.size(); }
    const std::vector<range>& ranges() const { return d_ranges; }
    /*! True when the ranges are exactly [0, end). */
    bool is_contiguous_from_zero(std::uint64_t end) const
    {
        return end == 0 ? d_ranges.empty()
                        : d_ranges.size() == 1 && d_ranges[0].begin == 0 &&
                              d_ranges[0].end == end;
    }

private:
    insert_result
    insert_slow(std::uint64_t begin, std::uint64_t end, std::size_t max_ranges);

    std::vector<range> d_ranges;
};

} // namespace spead
} // namespace gr

#endif
