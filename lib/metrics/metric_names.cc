/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "metrics/metric_names.h"
#include <gnuradio/spead/stats.h>

namespace gr {
namespace spead {
namespace metrics {

namespace {

std::string prefix(direction way)
{
    return way == direction::receive ? "spead_recv_" : "spead_send_";
}

/*! stats.h's sentence for \p stat, or empty for a block's own counter. */
std::string description(direction way, const std::string& stat)
{
    if (way == direction::receive) {
        for (std::size_t i = 0; i < recv_stats::size; i++)
            if (stat == stat_name(static_cast<recv_stat>(i)))
                return stat_description(static_cast<recv_stat>(i));
    } else {
        for (std::size_t i = 0; i < send_stats::size; i++)
            if (stat == stat_name(static_cast<send_stat>(i)))
                return stat_description(static_cast<send_stat>(i));
    }
    return {};
}

} // namespace

metric_name metric_name_of(direction way, const std::string& stat)
{
    const std::string stem = prefix(way) + stat;
    // Set, not accumulated: the largest batch so far, the readers on a striding queue.
    if (way == direction::receive && stat == "max_batch")
        return { stem + "_packets", metric_type::gauge };
    if (way == direction::receive && stat == "ibv_multi_packet_queues")
        return { stem, metric_type::gauge };
    // Prometheus wants base units: microseconds become seconds.
    if (way == direction::send && stat == "send_wait_us")
        return { prefix(way) + "send_wait_seconds_total", metric_type::counter, 1e-6 };
    return { stem + "_total", metric_type::counter };
}

std::string metric_help(direction way, const std::string& stat)
{
    const std::string text = description(way, stat);
    if (!text.empty())
        return stat + ": " + text;
    return stat + ": the block's own counter (docs/statistics.md)";
}

std::string queue_metric(direction way) { return prefix(way) + "queue_heaps"; }

std::string connections_metric(direction way) { return prefix(way) + "connections_open"; }

} // namespace metrics
} // namespace spead
} // namespace gr
