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
