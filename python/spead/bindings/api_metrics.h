/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PYTHON_API_METRICS_H
#define INCLUDED_SPEAD_PYTHON_API_METRICS_H

/* The Python streams' `metrics` field (recv.StreamConfig, send.StreamConfig; an
 * addition over spead2): the stream's counters served to Prometheus, labelled
 * stream="recv_stream_N" / "send_stream_N" (N counts the process's streams). */

#include "api_configs.h"
#include "metrics/metrics_exposer.h"
#include <gnuradio/spead/inproc_queue.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/send_rdma.h>
#include <gnuradio/spead/send_stream.h>
#include <gnuradio/spead/send_tcp.h>
#include <gnuradio/spead/send_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace python {

/*! gr-spead's addition to a StreamConfig: `metrics`, the HOST:PORT its stream's
 * counters are served on (docs/monitoring.md); "" (default): none. A bad address is a
 * ValueError naming `metrics`. */
template <typename Config, typename Cls>
void def_metrics_field(Cls& cls)
{
    cls.def_property(
        "metrics",
        [](const Config& c) { return c.metrics; },
        [](Config& c, const py::handle& v) {
            const auto address = field_value<std::string>(v, "metrics");
            if (!address.empty())
                metrics::listen_address(address);
            c.metrics = address;
        });
}

/*! A send stream's (transport, endpoint) labels from its link config. */
std::pair<std::string, std::string> link_labels(const send::udp_config& c);
std::pair<std::string, std::string> link_labels(const send::udp_ibv_config& c);
std::pair<std::string, std::string> link_labels(const send::tcp_config& c);
std::pair<std::string, std::string> link_labels(const send::rdma_config& c);
/*! An InprocStream's: transport inproc, its queues counted as the endpoint. */
std::pair<std::string, std::string>
link_labels(const std::vector<std::shared_ptr<inproc_queue>>& queues);

/*! \p stream served on \p address (nothing for ""); \p stream must outlive the
 * registration. */
metrics::registration expose_stream(const std::string& address,
                                    const recv::stream& stream);
/*! As above, for a send stream over \p transport to \p endpoint. */
metrics::registration expose_stream(const std::string& address,
                                    const send::stream& stream,
                                    const std::string& transport,
                                    const std::string& endpoint);

} // namespace python
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PYTHON_API_METRICS_H */
