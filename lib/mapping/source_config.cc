/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_transport.h"
#include "mapping/source_options.h"
#include "mapping/stats_timer.h"
#include <gnuradio/spead/source_config.h>
#include <stdexcept>

namespace gr {
namespace spead {

source_config::source_config() { apply_defaults(*this, source_option_rules()); }

source_config::source_config(const option_list& options) : source_config()
{
    apply_options(*this, options);
}

source_config& source_config::set(const std::string& name, const option_value& value)
{
    apply_option(*this, source_option_rules(), "source", name, value);
    return *this;
}

const std::vector<option_info>& source_config::options()
{
    static const std::vector<option_info> infos = option_infos(source_option_rules());
    return infos;
}

source_config& source_config::set_transport(const std::string& name)
{
    check_transport_name(name, transport_direction::receive);
    d_transport = name;
    return *this;
}

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

source_config& source_config::set_queue_heaps(std::size_t heaps)
{
    d_queue_heaps = heaps;
    return *this;
}

source_config& source_config::set_stats_interval(double seconds)
{
    check_stats_interval(seconds);
    d_stats_interval = seconds;
    return *this;
}

source_config& source_config::set_capture_file(const std::string& path)
{
    d_capture_file = path;
    return *this;
}

std::string source_config::refusal(const std::string& transport) const
{
    return first_refusal(d_refusals, transport);
}

} // namespace spead
} // namespace gr
