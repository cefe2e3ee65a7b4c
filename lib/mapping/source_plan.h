/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_SOURCE_PLAN_H
#define INCLUDED_SPEAD_MAPPING_SOURCE_PLAN_H

#include "mapping/block_transport.h"
#include "mapping/heap_to_stream.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/source_config.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! What a source runs with, settled once from its parameters. */
struct source_plan {
    transport_choice transport;
    recv::udp_config udp;     //!< udp, or auto (ready for the fallback)
    recv::udp_ibv_config ibv; //!< ibverbs
    recv::tcp_config tcp;     //!< tcp: where to listen and whom to let in
    recv::rdma_config rdma;   //!< rdma: where to listen and whom to let in
    /*! One reader (thread) each: udp's endpoints split by port, ibverbs' one by one
     * (\p threads of them; one holding all when threads is 1). */
    std::vector<recv::udp_config> udp_readers;
    std::vector<recv::udp_ibv_config> ibv_readers;
    std::string capture_file;       //!< pcap
    std::uint16_t capture_port = 0; //!< pcap: only datagrams to this port (0: all)
    recv::stream_config stream;
    heap_to_stream_config mapping;
    std::size_t item_size = 1; //!< bytes of one output item
    std::size_t max_items = 1; //!< items of the largest heap
    bool continuous = false;   //!< output_mode continuous (stream.is_continuous())
    std::size_t outputs = 1;   //!< substreams in continuous mode
    std::chrono::duration<double> stats_interval{ 0 };
    std::string metrics; //!< where Prometheus scrapes the counters ("": nowhere)
    std::string where;   //!< the endpoints (or capture), as messages name them
};

/*!
 * Checks \p config's options against each other (each was checked alone where it
 * lives) and settles the transport (choose_transport) and what follows from it: the
 * readers' shares of the endpoints, the queue, the continuous layout's sizes.
 * \throws std::invalid_argument naming the option, the value and the fix.
 */
SPEAD_API source_plan plan_source(const source_config& config,
                                  const gr::logger_ptr& logger);

/*! The output mode's mapping: heap_to_stream (heaps) or chunk_to_stream
 * (continuous, with a heap_to_stream for the heaps beside the chunks). */
SPEAD_API std::unique_ptr<source_mapping>
make_source_mapping(const source_plan& plan, const gr::logger_ptr& logger);

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_SOURCE_PLAN_H */
