/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_BLOCK_TRANSPORT_H
#define INCLUDED_SPEAD_BLOCK_TRANSPORT_H

/* Which transport a source or sink block runs on: the one place that reads the
 * `transport` parameter, the environment overrides and ibv::preflight, and the one
 * place that falls back from ibverbs to udp when `auto` meets a device that refuses. */

#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

/*! The transport a source or sink block runs on once "auto" is decided. */
enum class transport_kind { udp, ibverbs, pcap, tcp, rdma };

/*! The block parameter's spelling: "udp", "ibverbs", "pcap", "tcp". */
SPEAD_API const char* transport_name(transport_kind t);


/*! Which way the block moves heaps: the wording of messages and whether the
 * environment overrides apply (they turn udp *sources* into ibverbs ones). */
enum class transport_direction { receive, send };

/*! What a block runs on, settled once at construction. */
struct transport_choice {
    transport_kind kind = transport_kind::udp;
    /*! `auto` was asked for: an ibverbs device that refuses when opened falls back to
     * udp (see open_with_fallback), so the udp settings must be ready too. */
    bool automatic = false;
    /*! ibverbs (and auto): the interface as given or taken from the environment. */
    std::string interface;
    /*! comp_vector after GR_SPEAD_IBV_COMP_VECTOR. */
    int comp_vector = 0;
};

/*! Checks a block's `transport` option: udp, ibverbs, auto, pcap, tcp or rdma.
 * \throws std::invalid_argument naming transport and the choices */
SPEAD_API void check_transport_name(const std::string& transport,
                                    transport_direction direction);

/*!
 * Settles the transport from the block's `transport` parameter (udp, ibverbs, auto,
 * pcap, tcp), the environment (receive only: GR_SPEAD_IBV_INTERFACE turns udp into
 * ibverbs and supplies a missing interface; GR_SPEAD_IBV_COMP_VECTOR then sets
 * comp_vector) and, for auto, ibv::preflight on the interface. Logs what it decided and
 * why. \throws std::invalid_argument naming the parameter (transport, interface or
 * GR_SPEAD_IBV_COMP_VECTOR), the value and the fix.
 */
SPEAD_API transport_choice choose_transport(const std::string& transport,
                                            const std::string& interface,
                                            std::size_t buffer_size,
                                            int comp_vector,
                                            transport_direction direction,
                                            const gr::logger_ptr& logger);

/*! choose_transport() for a block's config (source_config, sink_config): its
 * transport, the interface as given and ibverbs' ring and completion vector. */
template <typename Config>
transport_choice choose_transport_of(const Config& c, const gr::logger_ptr& logger)
{
    return choose_transport(c.get_transport(),
                            c.udp.get_interface(),
                            c.ibverbs.get_buffer_size(),
                            c.ibverbs.get_comp_vector(),
                            Config::receives ? transport_direction::receive
                                             : transport_direction::send,
                            logger);
}

/*!
 * Calls \p open(kind) for the chosen transport. When auto chose ibverbs and the device
 * still refuses (preflight cannot foresee everything: a unicast neighbour without a
 * MAC, a device limit), logs a warning, switches \p choice to udp and opens that.
 * Any other failure propagates.
 */
template <typename Open>
void open_with_fallback(transport_choice& choice,
                        const gr::logger_ptr& logger,
                        Open&& open)
{
    try {
        open(choice.kind);
    } catch (const std::exception& e) {
        if (!choice.automatic || choice.kind != transport_kind::ibverbs)
            throw;
        logger->warn("transport auto: ibverbs could not be set up on {} ({}); using udp",
                     choice.interface,
                     e.what());
        choice.kind = transport_kind::udp;
        open(choice.kind);
    }
}

/*! start()'s opening of a block's stream: \p open(), with a failure logged, not
 * thrown. start() runs in the block's thread, where an exception would only be logged
 * and leave the flowgraph waiting: the block's work() ends it instead. */
template <typename Open>
void open_at_start(const gr::logger_ptr& logger, Open&& open)
{
    try {
        open();
    } catch (const std::exception& e) {
        logger->error("cannot start: {}", e.what());
    }
}

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_BLOCK_TRANSPORT_H */
