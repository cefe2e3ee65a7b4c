/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "send_regions.h"
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace ibv {

void send_regions::check_no_overlap(const std::vector<memory_region>& given)
{
    // Overlap: sort by start, compare neighbours; report the user's indices.
    std::vector<std::size_t> order(given.size());
    for (std::size_t i = 0; i < order.size(); i++)
        order[i] = i;
    auto begin_of = [&](std::size_t i) {
        return reinterpret_cast<std::uintptr_t>(given[i].first);
    };
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return begin_of(a) < begin_of(b);
    });
    for (std::size_t k = 1; k < order.size(); k++) {
        const std::size_t a = order[k - 1], b = order[k];
        if (begin_of(a) + given[a].second > begin_of(b))
            throw std::invalid_argument(
                "memory_regions: region " + std::to_string(std::min(a, b)) +
                " overlaps region " + std::to_string(std::max(a, b)) +
                "; each byte may be registered once: merge overlapping regions into "
                "one");
    }
}

send_regions::send_regions(ibv_pd* pd, const std::vector<memory_region>& given)
{
    for (const auto& [ptr, size] : given) {
        // Handed to the driver as given: under PeerDirect a GPU pointer registers too.
        // The NIC only reads it.
        d_mrs.push_back(register_memory(pd, ptr, size, 0));
        const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
        d_regions.push_back({ begin, begin + size, d_mrs.back()->lkey });
    }
    std::sort(d_regions.begin(), d_regions.end(), [](const region& a, const region& b) {
        return a.begin < b.begin;
    });
}

} // namespace ibv
} // namespace spead
} // namespace gr
