/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_SINK_PLAN_H
#define INCLUDED_SPEAD_MAPPING_SINK_PLAN_H

#include "mapping/block_transport.h"
#include "mapping/stream_to_chunk.h"
#include "mapping/stream_to_heap.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/sink_config.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! Inputs a continuous sink takes at most (one GNU Radio input each). */
constexpr std::size_t sink_max_substreams = 256;

/*! What a sink runs with, settled once from its parameters. */
struct sink_plan {
    transport_choice transport;
    send::udp_config udp;     //!< udp, auto (ready for the fallback), pcap's destinations
    send::udp_ibv_config ibv; //!< ibverbs
    /*! tcp: one connection per endpoint (substream), and what to do when lost. */
    std::vector<send::tcp_config> tcp;
    /*! rdma: one connection per endpoint (substream), and what to do when lost. */
    std::vector<send::rdma_config> rdma;
    std::string capture_file; //!< pcap
    send::stream_config stream;
    bool continuous = false;       //!< input_mode "continuous"
    stream_to_heap_config heaps;   //!< heaps mode; its heap format is both modes'
    stream_to_chunk_config chunks; //!< continuous mode
    bool send_stop_heap = true;
    std::chrono::duration<double> stats_interval{ 0 };
    std::string metrics; //!< where Prometheus scrapes the counters ("": nowhere)
};

/*! Heaps in flight at once: the send queue depth, and the payload copies kept. */
constexpr std::size_t sink_send_slots = 8;

/*!
 * Checks \p config's options against each other (each was checked alone where it
 * lives, the item ids here against the flavour) and settles the transport
 * (choose_transport) and the heap format.
 * \throws std::invalid_argument naming the option, the value and the fix.
 */
SPEAD_API sink_plan plan_sink(const sink_config& config, const gr::logger_ptr& logger);

/*! The input mode's mapping: stream_to_heap (heaps) or stream_to_chunk
 * (continuous). */
SPEAD_API std::unique_ptr<sink_mapping> make_sink_mapping(const sink_plan& plan,
                                                          const gr::logger_ptr& logger);

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_SINK_PLAN_H */
