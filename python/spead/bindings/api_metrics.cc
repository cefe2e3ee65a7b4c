/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "api_metrics.h"
#include "transport/endpoint.h"
#include <atomic>
#include <sstream>

namespace gr {
namespace spead {
namespace python {

namespace {

std::string next_name(const char* kind)
{
    static std::atomic<unsigned> made{ 0 };
    return std::string(kind) + "_stream_" + std::to_string(++made);
}

template <typename Stats>
void add_counters(metrics::stream_sample& s, const Stats& stats)
{
    for (const auto& kv : stats.items())
        s.counters.push_back(kv);
}

} // namespace

std::pair<std::string, std::string> link_labels(const send::udp_config& c)
{
    return { "udp", transport::to_string(c.get_endpoints()) };
}

std::pair<std::string, std::string> link_labels(const send::udp_ibv_config& c)
{
    return { "ibverbs", transport::to_string(c.get_endpoints()) };
}

std::pair<std::string, std::string> link_labels(const send::tcp_config& c)
{
    std::ostringstream text;
    text << c.get_endpoint();
    return { "tcp", text.str() };
}

std::pair<std::string, std::string> link_labels(const send::rdma_config& c)
{
    return { "rdma", "verbs://" + c.get_host() + ":" + std::to_string(c.get_port()) };
}

std::pair<std::string, std::string>
link_labels(const std::vector<std::shared_ptr<inproc_queue>>& queues)
{
    return { "inproc", std::to_string(queues.size()) + " queue(s)" };
}

metrics::registration expose_stream(const std::string& address,
                                    const recv::stream& stream)
{
    if (address.empty())
        return {};
    return metrics::expose(address, [&stream, name = next_name("recv")] {
        metrics::stream_sample s;
        s.labels = { { "stream", name } };
        add_counters(s, stream.get_stats());
        s.queued_heaps = stream.get_queued_heaps();
        return std::vector<metrics::stream_sample>{ s };
    });
}

metrics::registration expose_stream(const std::string& address,
                                    const send::stream& stream,
                                    const std::string& transport,
                                    const std::string& endpoint)
{
    if (address.empty())
        return {};
    return metrics::expose(address,
                           [&stream, transport, endpoint, name = next_name("send")] {
                               metrics::stream_sample s;
                               s.way = metrics::direction::send;
                               s.labels = { { "stream", name },
                                            { "transport", transport },
                                            { "endpoint", endpoint } };
                               add_counters(s, stream.get_stats());
                               s.queued_heaps = stream.get_queued_heaps();
                               return std::vector<metrics::stream_sample>{ s };
                           });
}

} // namespace python
} // namespace spead
} // namespace gr
