/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "flag_error.h"
#include "mapping/shown_stats.h"
#include "stream_watch.h"
#include <filesystem>
#include <iostream>

namespace gr {
namespace spead {
namespace apps {

namespace po = boost::program_options;

namespace {

transport_kind kind_named(const std::string& name)
{
    for (auto kind : { transport_kind::udp,
                       transport_kind::ibverbs,
                       transport_kind::pcap,
                       transport_kind::tcp,
                       transport_kind::rdma })
        if (name == transport_name(kind))
            return kind;
    return transport_kind::udp;
}

std::map<std::string, std::uint64_t>
as_map(const std::vector<std::pair<std::string, std::uint64_t>>& items)
{
    return { items.begin(), items.end() };
}

} // namespace

void watch_options::add_to(po::options_description& options)
{
    options.add_options()(
        "metrics",
        po::value(&metrics)->value_name("HOST:PORT"),
        "serve the stream counters to Prometheus on http://HOST:PORT/metrics while "
        "running (e.g. 127.0.0.1:9148; docs/monitoring.md)")(
        "progress",
        po::value(&progress)->value_name("SECONDS"),
        "every SECONDS, a line on stderr: heaps, Gb/s, drops and losses since the "
        "last line");
}

void watch_options::check() const
{
    if (!metrics.empty())
        with_flag("--metrics", [&] { metrics::listen_address(metrics, "--metrics"); });
    if (!(progress >= 0) || progress > 1e6)
        throw po::error("--progress: " + std::to_string(progress) +
                        " is not an interval; give the seconds between lines, e.g. 1 "
                        "(0: none)");
}

stream_watch::stream_watch(const watch_options& options, std::string tool)
    : d_options(options), d_tool(std::move(tool))
{
}

void stream_watch::say_where() const
{
    // The port chosen when --metrics gave port 0 (tests do).
    const std::string host = d_options.metrics.substr(0, d_options.metrics.rfind(':'));
    std::cerr << d_tool << ": metrics at http://" << (host.empty() ? "0.0.0.0" : host)
              << ":" << d_registration.port() << "/metrics\n";
}

void stream_watch::watch_receivers(const std::vector<recv::stream*>& streams,
                                   const std::vector<std::string>& sources,
                                   const std::string& transport,
                                   bool continuous,
                                   const taken_counts& taken)
{
    if (!d_options.metrics.empty()) {
        d_registration = metrics::expose(d_options.metrics, [=, tool = d_tool] {
            std::vector<metrics::stream_sample> out;
            for (std::size_t i = 0; i < streams.size(); i++) {
                // one stream per SOURCE, or one for all (--joint)
                const std::string where =
                    streams.size() == sources.size() ? sources[i] : [&] {
                        std::string all;
                        for (const auto& s : sources)
                            all += (all.empty() ? "" : ",") + s;
                        return all;
                    }();
                const std::string kind =
                    std::filesystem::is_regular_file(where) ? "pcap" : transport;
                metrics::stream_sample s;
                s.labels = { { "stream", tool },
                             { "transport", kind },
                             { "endpoint", where } };
                for (const auto& kv :
                     countable_stats(as_map(streams[i]->get_stats().items()),
                                     kind_named(kind),
                                     continuous))
                    s.counters.push_back(kv);
                s.queued_heaps = streams[i]->get_queued_heaps();
                out.push_back(std::move(s));
            }
            return out;
        });
        say_where();
    }
    if (d_options.progress > 0)
        d_progress = std::make_unique<metrics::progress_reporter>(
            d_tool,
            d_options.progress,
            [streams, continuous, &taken] {
                recv_stats total;
                std::uint64_t placed_bytes = 0;
                for (const recv::stream* s : streams) {
                    const recv_stats one = s->get_stats();
                    placed_bytes += one[recv_stat::heaps] * s->get_heap_bytes();
                    total += one;
                }
                return metrics::progress_totals{
                    continuous ? total[recv_stat::heaps] : taken.heaps.load(),
                    continuous ? placed_bytes : taken.bytes.load(),
                    metrics::receive_dropped(total),
                    metrics::receive_lost(total)
                };
            },
            std::cerr);
}

void stream_watch::watch_sender(const send::stream& stream,
                                const std::string& transport,
                                const std::string& endpoint)
{
    if (!d_options.metrics.empty()) {
        d_registration = metrics::expose(
            d_options.metrics, [&stream, transport, endpoint, tool = d_tool] {
                metrics::stream_sample s;
                s.way = metrics::direction::send;
                s.labels = { { "stream", tool },
                             { "transport", transport },
                             { "endpoint", endpoint } };
                for (const auto& kv : countable_stats(
                         as_map(stream.get_stats().items()), kind_named(transport), true))
                    s.counters.push_back(kv);
                s.queued_heaps = stream.get_queued_heaps();
                return std::vector<metrics::stream_sample>{ s };
            });
        say_where();
    }
    if (d_options.progress > 0)
        d_progress = std::make_unique<metrics::progress_reporter>(
            d_tool,
            d_options.progress,
            [&stream] { return metrics::send_progress(stream.get_stats()); },
            std::cerr);
}

} // namespace apps
} // namespace spead
} // namespace gr
