/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/spead/source_config.h>
#include <stdexcept>

namespace gr {
namespace spead {

source_config::source_config() { apply({}); }

source_config::source_config(const option_list& options) { apply(options); }

source_config& source_config::set_output_mode(const std::string& mode)
{
    if (mode != "heaps" && mode != "continuous")
        throw std::invalid_argument(
            "output_mode: '" + mode +
            "' is not a mode; use heaps (one heap after another, tagged with its "
            "length) or continuous (heaps placed by timestamp, gaps zero-filled)");
    d_output_mode = mode;
    return *this;
}

source_config& source_config::set_threads(std::size_t threads)
{
    if (threads < 1 || threads > 64)
        throw std::invalid_argument("threads: " + std::to_string(threads) +
                                    " is out of range; use 1 to 64 receiver threads "
                                    "(each takes a share of the endpoints)");
    d_threads = threads;
    return *this;
}

} // namespace spead
} // namespace gr
