/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_METRICS_METRIC_NAMES_H
#define INCLUDED_SPEAD_METRICS_METRIC_NAMES_H

/* docs/statistics.md's counter names as Prometheus metric names: the name is the
 * stem, after spead_recv_ or spead_send_; counters end in _total, a unit goes in the
 * name in base units (seconds), and values that are set rather than accumulated are
 * gauges. docs/monitoring.md lists the result. */

#include "metrics/stream_sample.h"
#include <gnuradio/spead/api.h>
#include <string>

namespace gr {
namespace spead {
namespace metrics {

enum class metric_type { counter, gauge };

/*! A counter's metric: its name, its type, and what its value is multiplied by. */
struct metric_name {
    std::string name;
    metric_type type = metric_type::counter;
    double scale = 1.0;
};

/*! The metric of the counter \p stat of a stream of direction \p way (a stream's
 * counter, or a block's own: heaps_output, data_heaps...). */
SPEAD_API metric_name metric_name_of(direction way, const std::string& stat);

/*! The metric's HELP text: the counter's meaning (include/gnuradio/spead/stats.h),
 * or where to read it for a block's own counter. */
SPEAD_API std::string metric_help(direction way, const std::string& stat);

/*! The gauges that are no counter of docs/statistics.md: heaps waiting in the queue,
 * and open connections (accepted, or established, less those that ended). */
SPEAD_API std::string queue_metric(direction way);
SPEAD_API std::string connections_metric(direction way);

} // namespace metrics
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_METRICS_METRIC_NAMES_H */
