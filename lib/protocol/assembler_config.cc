/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "assembler_config.h"
#include <stdexcept>

namespace gr {
namespace spead {
namespace recv {

void assembler_config::validate() const
{
    if (max_heaps < 1)
        throw std::invalid_argument("max_heaps must be at least 1; use 4 or more when "
                                    "several senders or reordering interleave heaps");
    if (max_heap_size < 1)
        throw std::invalid_argument(
            "max_heap_size must be at least 1 byte; set it to the "
            "largest heap payload the stream carries");
    if (max_item_pointers < 1)
        throw std::invalid_argument("max_item_pointers must be at least 1");
    if (substreams < 1)
        throw std::invalid_argument(
            "substreams must be at least 1 (windows of max_heaps live heaps, chosen by "
            "heap cnt modulo substreams; 1: one window)");
}

} // namespace recv
} // namespace spead
} // namespace gr
