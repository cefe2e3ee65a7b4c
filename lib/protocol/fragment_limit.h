/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_FRAGMENT_LIMIT_H
#define INCLUDED_SPEAD_PROTOCOL_FRAGMENT_LIMIT_H

#include "interval_set.h"
#include <gnuradio/spead/stats.h>
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace gr {
namespace spead {

/*!
 * \brief How many separate received ranges one heap may have, and the recording of a
 * packet's range under that limit, with the packet counted when it is refused.
 *
 * Both assemblers use it, so a heap reordered the same way is refused the same way in
 * either mode: the limit bounds the time and memory one heap's bookkeeping can take
 * under hostile input.
 */
class fragment_limit
{
public:
    /*! At least this many ranges, however small the heaps. */
    static constexpr std::size_t minimum = 64;

    /*! \p configured ranges, or 0: max(minimum, \p heap_bytes / 1024), one range per
     * KiB of the largest heap. */
    static std::size_t choose(std::size_t configured, std::uint64_t heap_bytes)
    {
        return configured != 0
                   ? configured
                   : std::max<std::size_t>(minimum, std::size_t(heap_bytes / 1024));
    }

    explicit fragment_limit(std::size_t max_ranges) : d_max(max_ranges) {}

    /*! Records [begin, end) in \p ranges. \return true when added; otherwise the
     * packet is counted in \p stats (packets_duplicate, packets_overlap or
     * packets_over_heap_limits) and nothing changed. */
    bool record(interval_set& ranges,
                std::uint64_t begin,
                std::uint64_t end,
                recv_stats& stats) const
    {
        switch (ranges.insert(begin, end, d_max)) {
        case interval_set::insert_result::added:
            return true;
        case interval_set::insert_result::duplicate:
            stats[recv_stat::packets_duplicate]++;
            return false;
        case interval_set::insert_result::overlap:
            stats[recv_stat::packets_overlap]++;
            return false;
        case interval_set::insert_result::too_many:
            stats[recv_stat::packets_over_heap_limits]++;
            return false;
        }
        return false;
    }

    std::size_t max_ranges() const { return d_max; }

private:
    std::size_t d_max;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_FRAGMENT_LIMIT_H */
