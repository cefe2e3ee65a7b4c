/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/cnt_index.h"
#include <algorithm>

namespace gr {
namespace spead {

cnt_index::cnt_index(std::size_t slots)
{
    // At most half full: probes stay short.
    std::size_t size = 2;
    unsigned bits = 1;
    while (size < 2 * slots) {
        size *= 2;
        bits++;
    }
    d_table.assign(size, entry());
    d_shift = 64 - bits;
}

void cnt_index::insert(std::uint64_t cnt, std::size_t slot)
{
    const std::size_t mask = d_table.size() - 1;
    std::size_t i = home(cnt);
    while (d_table[i].slot != 0)
        i = (i + 1) & mask;
    d_table[i] = entry{ cnt, slot + 1 };
}

void cnt_index::erase(std::uint64_t cnt, std::size_t slot)
{
    const std::size_t mask = d_table.size() - 1;
    std::size_t i = home(cnt);
    while (d_table[i].slot != slot + 1)
        i = (i + 1) & mask;
    // Backward shift: entries after the hole move up unless they would pass their home.
    for (std::size_t j = (i + 1) & mask; d_table[j].slot != 0; j = (j + 1) & mask) {
        const std::size_t k = home(d_table[j].cnt);
        const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            d_table[i] = d_table[j];
            i = j;
        }
    }
    d_table[i] = entry();
}

void cnt_index::clear() { std::fill(d_table.begin(), d_table.end(), entry()); }

} // namespace spead
} // namespace gr
