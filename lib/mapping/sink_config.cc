/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_transport.h"
#include "mapping/sink_options.h"
#include "mapping/stats_timer.h"
#include <gnuradio/spead/sink_config.h>
#include <stdexcept>

namespace gr {
namespace spead {

sink_config::sink_config() { apply_defaults(*this, sink_option_rules()); }

sink_config::sink_config(const option_list& options) : sink_config()
{
    apply_options(*this, options);
}

sink_config& sink_config::set(const std::string& name, const option_value& value)
{
    apply_option(*this, sink_option_rules(), "sink", name, value);
    return *this;
}

const std::vector<option_info>& sink_config::options()
{
    static const std::vector<option_info> infos = option_infos(sink_option_rules());
    return infos;
}

sink_config& sink_config::set_transport(const std::string& name)
{
    check_transport_name(name, transport_direction::send);
    d_transport = name;
    return *this;
}

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

sink_config& sink_config::set_send_stop_heap(bool send)
{
    d_send_stop_heap = send;
    return *this;
}

sink_config& sink_config::set_stats_interval(double seconds)
{
    check_stats_interval(seconds);
    d_stats_interval = seconds;
    return *this;
}

sink_config& sink_config::set_capture_file(const std::string& path)
{
    d_capture_file = path;
    return *this;
}

std::string sink_config::refusal(const std::string& transport) const
{
    return first_refusal(d_refusals, transport);
}

} // namespace spead
} // namespace gr
