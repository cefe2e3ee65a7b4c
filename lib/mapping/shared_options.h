/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_SHARED_OPTIONS_H
#define INCLUDED_SPEAD_MAPPING_SHARED_OPTIONS_H

/* The options spead.source and spead.sink have alike (the transport, the item type
 * and vector length, the stats interval, ibverbs' completion settings), written once
 * for both tables; Config::receives picks the words for a receiver or a sender. */

#include "mapping/option_rules.h"
#include "transport/endpoint_argument.h"
#include <string>

namespace gr {
namespace spead {

/*! `transport`: the transports and what each does at this end. */
template <typename Config>
option_rule<Config> transport_rule()
{
    const bool rx = Config::receives;
    return { describe(
                 "transport",
                 "General",
                 option_kind::text,
                 "udp",
                 std::string("udp (kernel sockets), ibverbs (raw-packet verbs on the "
                             "NIC that owns interface: Mellanox/NVIDIA ConnectX; "
                             "needs CAP_NET_RAW), auto (ibverbs when a preflight "
                             "check finds it usable on interface, otherwise udp with "
                             "a warning saying why), pcap (") +
                     (rx ? "replay" : "record into") + " capture_file), tcp (" +
                     (rx ? "listen for SPEAD over TCP, as spead2_recv --tcp: "
                           "lossless, senders pushed back"
                         : "connect to a listening spead.source or spead2_recv "
                           "--tcp: lossless, work() waits while the receiver is "
                           "slow") +
                     ") or rdma (the same over RDMA RC queue pairs, verbs://" +
                     (rx ? "ADDR" : "HOST") + ":PORT); docs/links.md." +
                     (rx ? " GR_SPEAD_IBV_INTERFACE turns every udp source into an "
                           "ibverbs one on that interface (an interface given here "
                           "wins), and GR_SPEAD_IBV_COMP_VECTOR then sets "
                           "comp_vector."
                         : "")),
             set_config<&Config::set_transport> };
}

/*!
 * `endpoints` for \p transport, which takes places of \p form, read as the tools read
 * theirs (transport/endpoint_argument.h): a bare PORT becomes :PORT when receiving,
 * and a capture file or a verbs:// endpoint given to a transport that takes another
 * kind says which transport takes it. Empty stays empty (each transport says what it
 * needs). \throws std::invalid_argument naming endpoints
 */
template <typename Config>
std::string endpoints_for(const std::string& text,
                          const char* transport,
                          transport::endpoint_form form)
{
    using transport::endpoint_form;
    if (text.empty())
        return text;
    const auto use = Config::receives ? transport::endpoint_use::receive
                                      : transport::endpoint_use::send;
    const transport::endpoint_argument given =
        transport::read_endpoint_argument(text, "endpoints", use);
    if (given.form == form)
        return given.text;
    const std::string head = "endpoints: \"" + text + "\" is " +
                             transport::form_name(given.form) + ", which transport " +
                             transport + " does not take; ";
    if (given.form == endpoint_form::capture_file && std::string(transport) == "pcap")
        throw std::invalid_argument(
            "endpoints: \"" + text + "\" is a capture file: give it as capture_file. " +
            (Config::receives ? "endpoints is then :PORT (replay only the datagrams to "
                                "that port) or empty (all of them)"
                              : "endpoints are then the destinations written into its "
                                "frames, e.g. 127.0.0.1:7148"));
    if (given.form == endpoint_form::capture_file)
        throw std::invalid_argument(
            head + (Config::receives ? "to replay it" : "to record into it") +
            ", set transport=pcap and capture_file=" + text);
    if (given.form == endpoint_form::verbs)
        throw std::invalid_argument(head + "set transport=rdma");
    throw std::invalid_argument(head + "write verbs://" + given.text);
}

/*! `item_type` (GRC id `type`) and `vlen`: the stream items. */
template <typename Config>
option_rule<Config> item_type_rule()
{
    using items = decltype(Config::items);
    return { describe("item_type",
                      "General",
                      option_kind::text,
                      "complex_float",
                      "Stream item type: complex_float (fc32, 8 bytes), complex_int16 "
                      "(sc16, 4), complex_int8 (sc8, 2), float (f32, 4), int32 (s32, 4), "
                      "int16 (s16, 2), int8 (s8, byte, 1).",
                      "type"),
             set_part<&Config::items, &items::set_item_type> };
}

template <typename Config>
option_rule<Config> vlen_rule()
{
    using items = decltype(Config::items);
    return { describe("vlen",
                      "General",
                      option_kind::count,
                      1,
                      "Items per stream vector, 1 to 2^24."),
             set_part<&Config::items, &items::set_vlen> };
}

template <typename Config>
option_rule<Config> stats_interval_rule()
{
    return { describe("stats_interval",
                      "Advanced",
                      option_kind::number,
                      0.0,
                      "Seconds between stats messages; 0 = none."),
             set_config<&Config::set_stats_interval> };
}

/*! `metrics`: where Prometheus scrapes the block's counters (docs/monitoring.md). */
template <typename Config>
option_rule<Config> metrics_rule()
{
    return { describe("metrics",
                      "Advanced",
                      option_kind::text,
                      "",
                      "Serve the counters to Prometheus on HOST:PORT (e.g. "
                      "127.0.0.1:9148; :9148 = every interface), one exposer per "
                      "process and address shared by every block that names it, each "
                      "stream labelled by block alias, transport and endpoint "
                      "(docs/monitoring.md); empty = off."),
             set_config<&Config::set_metrics> };
}

/*! `comp_vector` and `max_poll`: ibverbs' completions. */
template <typename Config>
option_rule<Config> comp_vector_rule()
{
    using ibv = decltype(Config::ibverbs);
    return { describe("comp_vector",
                      "Advanced",
                      option_kind::integer,
                      0,
                      "ibverbs: completion vector whose interrupt wakes the block's "
                      "thread, taken modulo the device's vectors; negative = busy "
                      "polling (one core spins, lowest latency)."),
             set_part<&Config::ibverbs, &ibv::set_comp_vector> };
}

template <typename Config>
option_rule<Config> max_poll_rule()
{
    using ibv = decltype(Config::ibverbs);
    return { describe("max_poll",
                      "Advanced",
                      option_kind::integer,
                      10,
                      "ibverbs: completion-queue polls per wake-up, or before yielding "
                      "when busy polling, >= 1."),
             set_part<&Config::ibverbs, &ibv::set_max_poll> };
}

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_SHARED_OPTIONS_H */
