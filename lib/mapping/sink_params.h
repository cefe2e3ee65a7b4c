/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_SINK_PARAMS_H
#define INCLUDED_SPEAD_MAPPING_SINK_PARAMS_H

#include "mapping/block_transport.h"
#include "mapping/stream_to_chunk.h"
#include "mapping/stream_to_heap.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_rdma.h>
#include <gnuradio/spead/send_stream.h>
#include <gnuradio/spead/send_tcp.h>
#include <gnuradio/spead/send_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! spead.sink's parameters, as sink::make takes them (documented there). */
struct sink_params {
    std::string transport = "udp";
    std::string endpoints = "127.0.0.1:7148";
    std::string interface;
    std::size_t buffer_size = 0;
    std::size_t max_packet_size = 1472;
    std::string item_type = "complex_float";
    std::size_t vlen = 1;
    std::uint64_t payload_item = 0x1000;
    std::string len_tag_key = "packet_len";
    std::size_t heap_items = 0;
    int ttl = 1;
    double rate_gbps = 0.0;
    std::string flavour = "64-40";
    std::uint64_t heap_cnt_start = 1;
    std::uint64_t heap_cnt_step = 1;
    std::size_t descriptor_interval = 0;
    std::string payload_name = "payload";
    std::string payload_description;
    std::string byte_order = "as-is";
    bool send_stop_heap = true;
    std::string capture_file;
    double stats_interval = 0.0;
    int comp_vector = 0;
    int max_poll = 10;
    std::string input_mode = "heaps";
    std::uint64_t timestamp_item = 0x1600;
    std::uint64_t timestamp_step = 0;
    std::uint64_t start_timestamp = 0;
    double sample_rate = 0.0;
    double sync_time = 0.0;
    std::size_t substreams = 1;
    std::uint64_t substream_item = 0;
    bool reconnect = false;
    double connect_timeout = 5.0;
    std::size_t inline_bytes = 64; //!< rdma: inline size requested
};

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
};

/*! Heaps in flight at once: the send queue depth, and the payload copies kept. */
constexpr std::size_t sink_send_slots = 8;

/*!
 * Validates every parameter once and settles the transport (choose_transport). Checks
 * the transports' configs make are theirs.
 * \throws std::invalid_argument naming the parameter, the value and the fix.
 */
SPEAD_API sink_plan plan_sink(const sink_params& p, const gr::logger_ptr& logger);

/*! The input mode's mapping: stream_to_heap (heaps) or stream_to_chunk
 * (continuous). */
SPEAD_API std::unique_ptr<sink_mapping> make_sink_mapping(const sink_plan& plan,
                                                          const gr::logger_ptr& logger);

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_SINK_PARAMS_H */
