/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/spead/sink_config.h>
#include <stdexcept>

namespace gr {
namespace spead {

sink_config::sink_config() { apply({}); }

sink_config::sink_config(const option_list& options) { apply(options); }

sink_config& sink_config::set_input_mode(const std::string& mode)
{
    if (mode != "heaps" && mode != "tagged" && mode != "continuous")
        throw std::invalid_argument("input_mode: '" + mode +
                                    "' is not an input mode; use heaps (a heap per "
                                    "tagged packet) or continuous (a timestamped "
                                    "stream cut into heaps of heap_items)");
    d_input_mode = mode;
    return *this;
}

} // namespace spead
} // namespace gr
