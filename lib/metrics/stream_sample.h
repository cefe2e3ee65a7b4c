/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_METRICS_STREAM_SAMPLE_H
#define INCLUDED_SPEAD_METRICS_STREAM_SAMPLE_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace metrics {

/*! Which family of names a stream's counters take: spead_recv_* or spead_send_*. */
enum class direction { receive, send };

/*!
 * \brief One stream's counters at one scrape, and the labels that tell it apart.
 *
 * Labels, in this order where they apply: `stream` (the block's alias, the tool's
 * name, the Python stream's name), `transport` (udp, ibverbs, pcap, tcp, rdma),
 * `endpoint` (what it listens on or sends to) and `substream` (a sink's connected
 * link, one per substream). Counters are named as docs/statistics.md names them.
 */
struct stream_sample {
    direction way = direction::receive;
    std::vector<std::pair<std::string, std::string>> labels;
    std::vector<std::pair<std::string, std::uint64_t>> counters;
    /*! Heaps waiting in the stream's queue now, where it has one. */
    std::optional<std::uint64_t> queued_heaps;
};

/*! What a registration reports at each scrape (any thread): one sample per stream.
 * It reads the streams' stats snapshots; it must not block for long. */
using sampler = std::function<std::vector<stream_sample>()>;

} // namespace metrics
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_METRICS_STREAM_SAMPLE_H */
