/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_transport.h"
#include "transport/ibv/preflight.h"
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <stdexcept>

namespace gr {
namespace spead {

const char* transport_name(transport_kind t)
{
    switch (t) {
    case transport_kind::ibverbs:
        return "ibverbs";
    case transport_kind::pcap:
        return "pcap";
    case transport_kind::tcp:
        return "tcp";
    case transport_kind::rdma:
        return "rdma";
    case transport_kind::udp:
        break;
    }
    return "udp";
}

namespace {

/*! GR_SPEAD_IBV_COMP_VECTOR as an int. \throws std::invalid_argument naming it. */
int parse_comp_vector_variable(const char* text)
{
    char* end = nullptr;
    errno = 0;
    const long parsed = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || parsed < INT_MIN || parsed > INT_MAX)
        throw std::invalid_argument(
            std::string("GR_SPEAD_IBV_COMP_VECTOR: '") + text +
            "' is not an integer; set a completion vector (0, 1, ...), a negative "
            "number for busy polling, or unset it");
    return static_cast<int>(parsed);
}

} // namespace

void check_transport_name(const std::string& transport, transport_direction direction)
{
    for (const char* known : { "udp", "ibverbs", "auto", "pcap", "tcp", "rdma" })
        if (transport == known)
            return;
    const bool receive = direction == transport_direction::receive;
    throw std::invalid_argument(
        "transport: '" + transport +
        "' is unknown; use udp (kernel sockets), ibverbs (raw-packet verbs on the "
        "NIC that owns interface), auto (ibverbs when it can be used on interface, "
        "otherwise udp), pcap (" +
        (receive ? "replay" : "record into") + " capture_file) or tcp (" +
        (receive ? "listen for" : "connect to") +
        " a connected, lossless link; docs/links.md) or rdma (the same over RDMA "
        "RC queue pairs, verbs://HOST:PORT)");
}

transport_choice choose_transport(const std::string& transport,
                                  const std::string& interface,
                                  std::size_t buffer_size,
                                  int comp_vector,
                                  transport_direction direction,
                                  const gr::logger_ptr& logger)
{
    const bool receive = direction == transport_direction::receive;
    transport_choice choice;
    choice.interface = interface;
    choice.comp_vector = comp_vector;

    if (transport == "pcap") {
        choice.kind = transport_kind::pcap;
        return choice;
    }
    if (transport == "tcp") {
        // A connected link: no ibverbs twin yet, so the environment overrides (which
        // turn datagram sources into ibverbs ones) do not apply.
        choice.kind = transport_kind::tcp;
        return choice;
    }
    if (transport == "rdma") {
        // A connected link over RC queue pairs: its GR_SPEAD_RDMA_* overrides apply
        // in the rdma reader and stream themselves.
        choice.kind = transport_kind::rdma;
        return choice;
    }
    check_transport_name(transport, direction);

    std::string wanted = transport;
    if (receive) {
        const char* env_interface = std::getenv("GR_SPEAD_IBV_INTERFACE");
        bool from_environment = false;
        if (env_interface && *env_interface) {
            if (transport == "udp") {
                wanted = "ibverbs";
                const bool given = !interface.empty();
                if (!given)
                    choice.interface = env_interface;
                from_environment = true;
                logger->info("GR_SPEAD_IBV_INTERFACE={}: transport udp becomes "
                             "ibverbs on {}{}",
                             env_interface,
                             choice.interface,
                             given ? " (the interface given to the block wins)" : "");
            } else if (interface.empty()) {
                choice.interface = env_interface;
                from_environment = true;
                logger->info("GR_SPEAD_IBV_INTERFACE={}: transport {} uses interface {}",
                             env_interface,
                             transport,
                             choice.interface);
            }
        }
        const char* env_vector = std::getenv("GR_SPEAD_IBV_COMP_VECTOR");
        if (from_environment && env_vector && *env_vector) {
            choice.comp_vector = parse_comp_vector_variable(env_vector);
            logger->info("GR_SPEAD_IBV_COMP_VECTOR={}: comp_vector {}{}",
                         env_vector,
                         choice.comp_vector,
                         choice.comp_vector < 0 ? " (busy polling)" : "");
        }
    }

    if (wanted == "udp") {
        choice.kind = transport_kind::udp;
        return choice;
    }
    if (wanted == "ibverbs") {
        if (choice.interface.empty())
            throw std::invalid_argument(
                std::string("interface: empty; transport ibverbs ") +
                (receive ? "receives" : "sends") +
                " through the RDMA device that owns an interface: give its netdev name "
                "(e.g. ens1f0) or IPv4 address" +
                (receive ? " (or set GR_SPEAD_IBV_INTERFACE)" : "") +
                ", or use transport udp");
        choice.kind = transport_kind::ibverbs;
        return choice;
    }

    // auto: ibverbs when preflight finds it usable, otherwise udp saying why.
    choice.automatic = true;
    choice.kind = transport_kind::udp;
    if (choice.interface.empty()) {
        logger->warn("transport auto: no interface given, and ibverbs needs the NIC's "
                     "interface (netdev name or IPv4 address); using udp");
        return choice;
    }
    const auto report = ibv::preflight(choice.interface, buffer_size);
    if (report.usable()) {
        logger->info("transport auto: {}; using ibverbs", report.summary());
        choice.kind = transport_kind::ibverbs;
    } else {
        logger->warn("transport auto: {}; using udp", report.summary());
    }
    return choice;
}

} // namespace spead
} // namespace gr
