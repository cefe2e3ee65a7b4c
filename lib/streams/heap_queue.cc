/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "heap_queue.h"
#include <algorithm>
#include <utility>

namespace gr {
namespace spead {
namespace recv {

void heap_queue::grow()
{
    std::vector<heap> slots(std::min(d_capacity, std::max<std::size_t>(8, 2 * d_count)));
    for (std::size_t i = 0; i < d_count; i++)
        slots[i] = std::move(d_slots[(d_head + i) % d_slots.size()]);
    d_slots = std::move(slots);
    d_head = 0;
}

} // namespace recv
} // namespace spead
} // namespace gr
