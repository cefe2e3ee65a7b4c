/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "metrics/metric_families.h"
#include "metrics/metric_names.h"
#include <prometheus/text_serializer.h>
#include <map>

namespace gr {
namespace spead {
namespace metrics {

namespace {

/*! Connections a receiver accepted and did not see end (docs/statistics.md: every
 * accepted connection ends in one of these). */
constexpr const char* connection_endings[] = {
    "connections_closed",         "connections_lost",
    "connections_framing_errors", "connections_frame_too_large",
    "connections_partial_frame",  "connections_idle_timeout",
    "connections_stopped",
};

/*! Open connections from the counters, for a connected stream (else nothing). */
std::optional<std::uint64_t> open_connections(const stream_sample& s)
{
    std::map<std::string, std::uint64_t> c(s.counters.begin(), s.counters.end());
    const char* opened =
        s.way == direction::receive ? "connections_accepted" : "connections_established";
    const auto it = c.find(opened);
    if (it == c.end())
        return std::nullopt;
    std::uint64_t ended = 0;
    if (s.way == direction::receive) {
        for (const char* name : connection_endings)
            ended += c[name];
    } else {
        ended = c["connections_lost"];
    }
    return it->second > ended ? it->second - ended : 0;
}

class family_set
{
public:
    void add(const std::string& name,
             const std::string& help,
             metric_type type,
             const stream_sample& s,
             double value)
    {
        auto& f = d_families[name];
        if (f.name.empty()) {
            f.name = name;
            f.help = help;
            f.type = type == metric_type::counter ? prometheus::MetricType::Counter
                                                  : prometheus::MetricType::Gauge;
        }
        prometheus::ClientMetric m;
        for (const auto& [label, text] : s.labels)
            m.label.push_back({ label, text });
        (type == metric_type::counter ? m.counter.value : m.gauge.value) = value;
        f.metric.push_back(std::move(m));
    }

    std::vector<prometheus::MetricFamily> take()
    {
        std::vector<prometheus::MetricFamily> out;
        for (auto& kv : d_families)
            out.push_back(std::move(kv.second));
        return out;
    }

private:
    std::map<std::string, prometheus::MetricFamily> d_families;
};

} // namespace

std::vector<prometheus::MetricFamily>
metric_families(const std::vector<stream_sample>& samples)
{
    family_set families;
    for (const stream_sample& s : samples) {
        for (const auto& [stat, value] : s.counters) {
            const metric_name m = metric_name_of(s.way, stat);
            families.add(m.name,
                         metric_help(s.way, stat),
                         m.type,
                         s,
                         static_cast<double>(value) * m.scale);
        }
        if (s.queued_heaps)
            families.add(queue_metric(s.way),
                         "heaps waiting in the stream's queue now",
                         metric_type::gauge,
                         s,
                         static_cast<double>(*s.queued_heaps));
        if (const auto open = open_connections(s))
            families.add(connections_metric(s.way),
                         "connections open now (made, less those that ended)",
                         metric_type::gauge,
                         s,
                         static_cast<double>(*open));
    }
    return families.take();
}

std::string exposition_text(const std::vector<stream_sample>& samples)
{
    return prometheus::TextSerializer().Serialize(metric_families(samples));
}

} // namespace metrics
} // namespace spead
} // namespace gr
