/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_SOURCE_PARAMS_H
#define INCLUDED_SPEAD_MAPPING_SOURCE_PARAMS_H

#include "mapping/block_transport.h"
#include "mapping/heap_to_stream.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! spead.source's parameters, as source::make takes them (documented there). */
struct source_params {
    std::string transport = "udp";
    std::string endpoints = ":7148";
    std::string interface;
    std::size_t buffer_size = 0;
    std::size_t max_packet_size = 9200;
    std::string item_type = "complex_float";
    std::size_t vlen = 1;
    std::uint64_t payload_item = 0;
    std::string len_tag_key = "packet_len";
    std::size_t max_heap_size = 16 * 1024 * 1024;
    std::size_t max_heaps = 4;
    std::string incomplete_heaps = "drop";
    std::uint64_t timestamp_item = 0;
    double sample_rate = 0.0;
    double sync_time = 0.0;
    std::string byte_order = "auto";
    bool stop_on_stop_heap = true;
    std::string capture_file;
    std::size_t queue_heaps = 0;
    double stats_interval = 0.0;
    int comp_vector = 0;
    int max_poll = 10;
    std::string output_mode = "heaps";
    std::uint64_t timestamp_step = 0;
    std::size_t window_heaps = 64;
    std::size_t substreams = 1;
    std::uint64_t substream_item = 0;
    std::size_t threads = 1;
    std::string full_queue_policy = "drop";
    std::uint64_t first_substream = 0;
    std::size_t max_connections = 1;
    std::string allowed_peers;
    bool keep_listening = false;
    std::vector<std::uint64_t> substream_ids;
    std::size_t rdma_connections = 4; //!< rdma: connections on the RDMA-write path
    std::size_t rdma_depth = 8;       //!< rdma: writes in flight per such connection
};

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
};

/*!
 * Validates every parameter once and settles the transport (choose_transport). Checks
 * that the transports' configs make are theirs, with their messages re-prefixed with
 * the block parameter's name where the names differ.
 * \throws std::invalid_argument naming the parameter, the value and the fix.
 */
SPEAD_API source_plan plan_source(const source_params& p, const gr::logger_ptr& logger);

/*! The output mode's mapping: heap_to_stream (heaps) or chunk_to_stream
 * (continuous, with a heap_to_stream for the heaps beside the chunks). */
SPEAD_API std::unique_ptr<source_mapping>
make_source_mapping(const source_plan& plan, const gr::logger_ptr& logger);

/*! Calls \p set, re-prefixing an std::invalid_argument that names \p config_name
 * (a config setter's parameter) with \p block_name (the block parameter's). */
template <typename Set>
void as_block_parameter(const char* block_name, const char* config_name, Set&& set)
{
    try {
        set();
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        const std::string prefix = std::string(config_name) + ":";
        if (what.compare(0, prefix.size(), prefix) != 0)
            throw;
        throw std::invalid_argument(block_name + what.substr(prefix.size() - 1));
    }
}

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_SOURCE_PARAMS_H */
