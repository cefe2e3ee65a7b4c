/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The memory regions of send::udp_ibv_config, registered with the NIC so that items
// lying wholly inside one go out zero-copy. find() runs for every payload piece, so it
// is inline and remembers the region it found last.

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_SEND_REGIONS_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_SEND_REGIONS_H

#include "verbs.h"
#include <gnuradio/spead/api.h>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace ibv {

class SPEAD_API send_regions
{
public:
    using memory_region = std::pair<const void*, std::size_t>;

    /*! A registered user region, sorted by begin. */
    struct region {
        std::uintptr_t begin;
        std::uintptr_t end;
        std::uint32_t lkey;
    };

    /*! \throws std::invalid_argument naming `memory_regions` and the two indices when
     * regions overlap (each byte may be registered once) */
    static void check_no_overlap(const std::vector<memory_region>& given);

    send_regions() = default;
    /*! Registers each of \p given in \p pd, for the NIC to read.
     * \throws std::system_error explaining RLIMIT_MEMLOCK when the kernel refuses */
    send_regions(ibv_pd* pd, const std::vector<memory_region>& given);

    /*! The registered region that holds [p, p + length) wholly, or null. */
    const region* find(const std::uint8_t* p, std::size_t length)
    {
        if (d_regions.empty())
            return nullptr;
        const auto begin = reinterpret_cast<std::uintptr_t>(p);
        const auto end = begin + length;
        // Consecutive pieces are nearly always in the region the previous one was in.
        const region& cached = d_regions[d_last];
        if (begin >= cached.begin && end <= cached.end)
            return &cached;
        auto it = std::upper_bound(
            d_regions.begin(),
            d_regions.end(),
            begin,
            [](std::uintptr_t a, const region& r) { return a < r.begin; });
        if (it == d_regions.begin())
            return nullptr;
        --it;
        if (end > it->end)
            return nullptr;
        d_last = std::size_t(it - d_regions.begin());
        return &*it;
    }

private:
    std::vector<mr_ptr> d_mrs;
    std::vector<region> d_regions;
    std::size_t d_last = 0;
};

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
