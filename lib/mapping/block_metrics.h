/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_BLOCK_METRICS_H
#define INCLUDED_SPEAD_MAPPING_BLOCK_METRICS_H

/* How spead.source and spead.sink are watched: their streams' counters as Prometheus
 * samples (labelled by block alias, transport, endpoint and, for a sink's connected
 * links, substream), served on the block's `metrics` address, and as ControlPort
 * knobs. Everything here reads the stats snapshots the streams keep. */

#include "mapping/send_slots.h"
#include "mapping/sink_plan.h"
#include "mapping/source_plan.h"
#include "metrics/control_port.h"
#include "metrics/metrics_exposer.h"
#include <gnuradio/spead/api.h>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace spead {

using counter_map = std::map<std::string, std::uint64_t>;

/*! A source's one stream: \p stats (the block's stats()) that its transport counts,
 * labelled with where it listens (the plan's, which stay when the stream ends), and
 * its queue (\p queued, while open). */
SPEAD_API metrics::stream_sample source_sample(const std::string& alias,
                                               const source_plan& plan,
                                               const counter_map& stats,
                                               std::optional<std::size_t> queued);

/*! A sink's streams: one per connected link (labelled with its substream), plus the
 * block's own counters (\p block_counters) apart; or its one stream with them. */
SPEAD_API std::vector<metrics::stream_sample>
sink_samples(const std::string& alias,
             const sink_plan& plan,
             const send_slots& slots,
             const counter_map& block_counters);

/*! What a block keeps to be watched: its Prometheus registration and its ControlPort
 * knobs, both gone with it. */
class SPEAD_API block_watch
{
public:
    /*! Listens on \p address (once; later calls keep the first; nothing for an empty
     * address), so that a port in use fails when the block is made; \p sample is
     * served from start() on, when the block's alias is settled.
     * \throws what metrics::expose() throws */
    void expose(const std::string& address, metrics::sampler sample);
    /*! The flowgraph started the block: scrapes read it from now on. */
    void start() { d_started.store(true); }
    /*! ControlPort knobs "<alias>::<name>" for the counters in \p read's first
     * snapshot, read through \p read from then on. */
    void register_knobs(const std::string& alias,
                        metrics::direction way,
                        const metrics::counter_snapshot::reader& read);
    /*! Port of the exposer (0: none). */
    std::uint16_t port() const { return d_registration.port(); }

private:
    std::atomic<bool> d_started{ false };
    // the knobs and the registration go before what their readers read
    std::unique_ptr<metrics::control_port_counters> d_knobs;
    metrics::registration d_registration;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_BLOCK_METRICS_H */
