/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_metrics.h"
#include "mapping/shown_stats.h"
#include "transport/endpoint.h"
#include <sstream>

namespace gr {
namespace spead {

namespace {

using labels = std::vector<std::pair<std::string, std::string>>;

labels stream_labels(const std::string& alias,
                     transport_kind transport,
                     const std::string& endpoint)
{
    return { { "stream", alias },
             { "transport", transport_name(transport) },
             { "endpoint", endpoint } };
}

std::string joined(const std::vector<std::string>& parts)
{
    std::string out;
    for (const auto& part : parts)
        out += (out.empty() ? "" : ",") + part;
    return out;
}

void add_counters(metrics::stream_sample& s, const counter_map& counters)
{
    s.counters.insert(s.counters.end(), counters.begin(), counters.end());
}

counter_map as_map(const send_stats& stats)
{
    counter_map out;
    for (const auto& kv : stats.items())
        out.insert(kv);
    return out;
}

/*! A sink's destinations as its messages name them: one per connected link, else
 * one for the stream. */
std::vector<std::string> sink_endpoints(const sink_plan& plan)
{
    std::vector<std::string> out;
    for (const auto& c : plan.tcp) {
        std::ostringstream text;
        text << c.get_endpoint();
        out.push_back(text.str());
    }
    for (const auto& c : plan.rdma)
        out.push_back("verbs://" + c.get_host() + ":" + std::to_string(c.get_port()));
    if (!out.empty())
        return out;
    switch (plan.transport.kind) {
    case transport_kind::pcap:
        return { plan.capture_file };
    case transport_kind::ibverbs:
        return { transport::to_string(plan.ibv.get_endpoints()) };
    default:
        return { transport::to_string(plan.udp.get_endpoints()) };
    }
}

} // namespace

metrics::stream_sample source_sample(const std::string& alias,
                                     const source_plan& plan,
                                     const counter_map& stats,
                                     std::optional<std::size_t> queued)
{
    metrics::stream_sample s;
    s.way = metrics::direction::receive;
    s.labels = stream_labels(alias, plan.transport.kind, plan.where);
    add_counters(s, countable_stats(stats, plan.transport.kind, plan.continuous));
    if (queued)
        s.queued_heaps = *queued;
    return s;
}

std::vector<metrics::stream_sample> sink_samples(const std::string& alias,
                                                 const sink_plan& plan,
                                                 const send_slots& slots,
                                                 const counter_map& block_counters)
{
    const transport_kind kind = plan.transport.kind;
    const auto endpoints = sink_endpoints(plan);
    const auto streams = slots.stream_snapshots();
    metrics::stream_sample block;
    block.way = metrics::direction::send;
    block.labels = stream_labels(alias, kind, joined(endpoints));
    add_counters(block, countable_stats(block_counters, kind, true));
    if (plan.tcp.empty() && plan.rdma.empty()) {
        // one stream: its counters and the block's are one series
        add_counters(block,
                     countable_stats(streams.empty() ? as_map(slots.stats())
                                                     : as_map(streams.front().stats),
                                     kind,
                                     true));
        if (!streams.empty())
            block.queued_heaps = streams.front().queued_heaps;
        return { block };
    }
    std::vector<metrics::stream_sample> out{ block };
    for (std::size_t i = 0; i < streams.size() && i < endpoints.size(); i++) {
        metrics::stream_sample link;
        link.way = metrics::direction::send;
        link.labels = stream_labels(alias, kind, endpoints[i]);
        link.labels.emplace_back("substream", std::to_string(i));
        add_counters(link, countable_stats(as_map(streams[i].stats), kind, true));
        link.queued_heaps = streams[i].queued_heaps;
        out.push_back(std::move(link));
    }
    return out;
}

void block_watch::expose(const std::string& address, metrics::sampler sample)
{
    if (!address.empty() && !d_registration)
        d_registration = metrics::expose(address, [this, sample = std::move(sample)] {
            return d_started.load() ? sample() : std::vector<metrics::stream_sample>();
        });
}

void block_watch::register_knobs(const std::string& alias,
                                 metrics::direction way,
                                 const metrics::counter_snapshot::reader& read)
{
    std::vector<std::string> names;
    for (const auto& kv : read())
        names.push_back(kv.first);
    d_knobs = std::make_unique<metrics::control_port_counters>(alias, way, names, read);
}

} // namespace spead
} // namespace gr
