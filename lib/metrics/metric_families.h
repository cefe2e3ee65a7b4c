/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_METRICS_METRIC_FAMILIES_H
#define INCLUDED_SPEAD_METRICS_METRIC_FAMILIES_H

/* Streams' samples as Prometheus metric families: one family per metric name, one
 * series per stream (its labels), the gauges derived from the counters. */

#include "metrics/stream_sample.h"
#include <gnuradio/spead/api.h>
#include <prometheus/metric_family.h>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace metrics {

/*! The families of \p samples, sorted by name. */
std::vector<prometheus::MetricFamily>
metric_families(const std::vector<stream_sample>& samples);

/*! \p samples in Prometheus's text exposition format, as a scrape reads them. */
SPEAD_API std::string exposition_text(const std::vector<stream_sample>& samples);

} // namespace metrics
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_METRICS_METRIC_FAMILIES_H */
