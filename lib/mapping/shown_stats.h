/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_SHOWN_STATS_H
#define INCLUDED_SPEAD_MAPPING_SHOWN_STATS_H

#include "block_transport.h"
#include <gnuradio/prefs.h>
#include <gnuradio/spead/stats.h>
#include <cstdint>
#include <map>
#include <string>

namespace gr {
namespace spead {

/*!
 * What a block's `stats` message and its summary at stop() show: the counters the
 * transport in use can count (no ibverbs counter under udp...), and of those only the
 * non-zero ones, unless GNU Radio's preference [spead] stats_zero_counters = true
 * (or GR_CONF_SPEAD_STATS_ZERO_COUNTERS=1 in the environment) asks for the zeros too.
 * stats() always returns every counter.
 */
inline bool counts_with_transport(const std::string& name, transport_kind t)
{
    const bool udp = t == transport_kind::udp;
    const bool ibv = t == transport_kind::ibverbs;
    const bool pcap = t == transport_kind::pcap;
    if (name == "packets_dropped_socket_overflow" ||
        name == "runs_dropped_socket_overflow")
        return udp;
    if (name == "datagrams_oversize")
        return udp || ibv;
    if (name == "frames_dropped_no_buffer" || name == "ibv_multi_packet_queues" ||
        name == "packets_zero_copy" || name == "packets_copied" ||
        name == "ibv_port_down_events" || name == "ibv_qp_recoveries")
        return ibv;
    if (name == "frames_filtered")
        return pcap;
    if (name.rfind("connections_", 0) == 0 || name == "connect_failures" ||
        name == "receive_waits" || name == "send_waits" || name == "send_wait_us" ||
        name == "heaps_lost_in_flight")
        return t == transport_kind::tcp || t == transport_kind::rdma; // connected links'
    if (name == "frames_not_ipv4_udp" || name == "frames_vlan" ||
        name == "frames_ip_options" || name == "frames_fragmented" ||
        name == "frames_truncated")
        return ibv || pcap; // they parse Ethernet frames; kernel sockets do not
    return true;
}

/*! Counters only continuous output counts (their description says "continuous:"). */
inline bool continuous_only(const std::string& name)
{
    for (std::size_t i = 0; i < recv_stats::size; i++) {
        const auto s = static_cast<recv_stat>(i);
        if (name == stat_name(s))
            return std::string(stat_description(s)).rfind("continuous:", 0) == 0;
    }
    return name == "items_zero_filled";
}

/*! The counters of \p all that \p transport and the mode can count, zeros
 * included (what Prometheus and ControlPort serve); \p continuous: a continuous
 * source (its own counters are left out otherwise); the sink's continuous counters
 * exist only in that mode. */
inline std::map<std::string, std::uint64_t>
countable_stats(const std::map<std::string, std::uint64_t>& all,
                transport_kind transport,
                bool continuous)
{
    std::map<std::string, std::uint64_t> out;
    for (const auto& kv : all)
        if (counts_with_transport(kv.first, transport) &&
            (continuous || !continuous_only(kv.first)))
            out.insert(kv);
    return out;
}

/*! \p all as shown: countable_stats(), and of those the non-zero ones unless the
 * preference asks for zeros. */
inline std::map<std::string, std::uint64_t>
shown_stats(const std::map<std::string, std::uint64_t>& all,
            transport_kind transport,
            bool continuous)
{
    const bool zeros =
        prefs::singleton()->get_bool("spead", "stats_zero_counters", false);
    std::map<std::string, std::uint64_t> out;
    for (const auto& kv : countable_stats(all, transport, continuous))
        if (kv.second != 0 || zeros)
            out.insert(kv);
    return out;
}

/*! "name: value, name: value" */
inline std::string stats_line(const std::map<std::string, std::uint64_t>& stats)
{
    std::string out;
    for (const auto& kv : stats)
        out += (out.empty() ? "" : ", ") + kv.first + ": " + std::to_string(kv.second);
    return out.empty() ? "every counter is zero" : out;
}

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_SHOWN_STATS_H */
