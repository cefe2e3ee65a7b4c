/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SOURCE_CONFIG_H
#define INCLUDED_SPEAD_SOURCE_CONFIG_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/block_config_base.h>
#include <gnuradio/spead/item_mapping.h>
#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief Everything spead.source runs with, made of the layers' own configs: the
 * transport's (udp, udp_ibv, tcp, rdma; a capture file for pcap), the receive
 * stream's, the continuous layout, and the mapping to items.
 *
 * Two ways to fill it, which may be mixed:
 *  - by the parts, in C++: `c.set_transport("tcp"); c.tcp.set_max_connections(4);
 *    c.items.set_item_type("complex_int16"); c.stream.set_max_heaps(8);`
 *  - by option name, as GRC, Python keywords and docs/usage.md name them:
 *    `source_config({{"transport", "tcp"}, {"max_connections", 4}})` or
 *    `c.set("max_heaps", 8)` (see block_config_base).
 *
 * Every setter validates its own value; source::make() checks the options against
 * each other (e.g. sample_rate with timestamp_item) and settles the transport.
 */
class SPEAD_API source_config : public block_config_base<source_config>
{
public:
    /*! Every option at its default: a udp source on :7148 of complex_float heaps. */
    source_config();
    /*! The defaults, then \p options by name (the transport first).
     * \throws std::invalid_argument naming the first bad option */
    explicit source_config(const option_list& options);

    /*! The `transport` option's words for a receiver (replay, listen). */
    static constexpr bool receives = true;

    /*! `heaps` (default: one tagged heap after another) or `continuous` (placed by
     * timestamp, with the layout in continuous). */
    source_config& set_output_mode(const std::string& mode);
    const std::string& get_output_mode() const { return d_output_mode; }
    bool is_continuous() const { return d_output_mode == "continuous"; }

    /*! Receiver threads, 1 to 64 (default 1): udp and ibverbs split the endpoints
     * among them. */
    source_config& set_threads(std::size_t threads);
    std::size_t get_threads() const { return d_threads; }

    /*! Completed heaps waiting for work(); 0 (default): 512 MiB worth of
     * max_heap_size heaps (32 to 4096), 1 GiB worth (64 to 65536) for pcap. */
    source_config& set_queue_heaps(std::size_t heaps)
    {
        return detail::assign(*this, d_queue_heaps, heaps);
    }
    std::size_t get_queue_heaps() const { return d_queue_heaps; }

    /*! pcap: the UDP port whose datagrams are replayed (0, default: all; the
     * endpoints option's `:PORT`). */
    source_config& set_capture_port(std::uint16_t port)
    {
        return detail::assign(*this, d_capture_port, port);
    }
    std::uint16_t get_capture_port() const { return d_capture_port; }

    // ---- the parts ----
    recv::udp_config udp;         //!< udp, and auto's fallback
    recv::udp_ibv_config ibverbs; //!< ibverbs and auto (comp_vector, max_poll)
    recv::tcp_config tcp;         //!< tcp: where to listen and whom to let in
    recv::rdma_config rdma;       //!< rdma: the same over RC queue pairs
    recv::stream_config stream;   //!< heaps in assembly and in the queue
    /*! The layout of a continuous output (output_mode continuous); its item_bytes
     * and queue sizes are settled from the rest at make(). */
    recv::continuous_config continuous;
    source_items items; //!< heaps to items and tags

private:
    std::string d_output_mode = "heaps";
    std::size_t d_threads = 1;
    std::size_t d_queue_heaps = 0;
    std::uint16_t d_capture_port = 0;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SOURCE_CONFIG_H */
