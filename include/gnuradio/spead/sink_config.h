/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SINK_CONFIG_H
#define INCLUDED_SPEAD_SINK_CONFIG_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/block_config_base.h>
#include <gnuradio/spead/continuous_layout.h>
#include <gnuradio/spead/item_mapping.h>
#include <gnuradio/spead/send_rdma.h>
#include <gnuradio/spead/send_stream.h>
#include <gnuradio/spead/send_tcp.h>
#include <gnuradio/spead/send_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief What a continuous sink (input_mode continuous) adds to the layout it shares
 * with a continuous source: where the timestamps start and how rx_time tags map to
 * them. Checked at make(), with the flavour's limits.
 */
struct SPEAD_API continuous_input : continuous_layout {
    /*! The first heap's timestamp, unless an rx_time tag gives one (default 0). */
    std::uint64_t start_timestamp = 0;
    /*! Timestamps per second, >= 0, for rx_time tags (0: they are ignored). */
    double sample_rate = 0.0;
    /*! UNIX time in seconds of timestamp 0 (default 0). */
    double sync_time = 0.0;
};

/*!
 * \brief Everything spead.sink runs with, made of the layers' own configs: the
 * transport's (udp, udp_ibv, tcp and rdma connections, one per endpoint; a capture
 * file for pcap), the send stream's, the continuous layout, and the mapping from
 * items.
 *
 * Filled by the parts in C++ (`c.set_transport("tcp"); c.items.set_heap_items(4096);`)
 * or by option name as GRC, Python keywords and docs/usage.md name them
 * (`sink_config({{"transport", "tcp"}, {"endpoints", "10.0.0.2:7148"}})`; see
 * block_config_base).
 */
class SPEAD_API sink_config : public block_config_base<sink_config>
{
public:
    /*! Every option at its default: a udp sink to 127.0.0.1:7148 of complex_float
     * heaps. */
    sink_config();
    /*! The defaults, then \p options by name (the transport first).
     * \throws std::invalid_argument naming the first bad option */
    explicit sink_config(const option_list& options);

    /*! The `transport` option's words for a sender (record into, connect to). */
    static constexpr bool receives = false;

    /*! `heaps` (default: a heap per tagged packet, or per heap_items items) or
     * `continuous` (each input cut into heaps of heap_items, timestamped); `tagged`
     * is the old name of heaps. */
    sink_config& set_input_mode(const std::string& mode);
    const std::string& get_input_mode() const { return d_input_mode; }
    bool is_continuous() const { return d_input_mode == "continuous"; }

    /*! Send a stop heap at stop() (default true). */
    sink_config& set_send_stop_heap(bool send)
    {
        return detail::assign(*this, d_send_stop_heap, send);
    }
    bool get_send_stop_heap() const { return d_send_stop_heap; }

    // ---- the parts ----
    send::udp_config udp;         //!< udp, auto's fallback, pcap's destinations
    send::udp_ibv_config ibverbs; //!< ibverbs and auto (comp_vector, max_poll)
    /*! tcp: one connection per endpoint (input i's heaps go to endpoint i); before
     * any endpoint is given, one without an endpoint holds the settings. */
    std::vector<send::tcp_config> tcp{ send::tcp_config() };
    /*! rdma: one connection per endpoint, as tcp. */
    std::vector<send::rdma_config> rdma{ send::rdma_config() };
    /*! Packet size and rate (its max_heaps is the sink's 8 send slots). */
    send::stream_config stream;
    continuous_input continuous; //!< input_mode continuous
    sink_items items;            //!< items and tags to heaps

private:
    std::string d_input_mode = "heaps";
    bool d_send_stop_heap = true;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SINK_CONFIG_H */
