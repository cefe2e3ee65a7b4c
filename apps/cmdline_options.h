/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_CMDLINE_OPTIONS_H
#define INCLUDED_SPEAD_APPS_CMDLINE_OPTIONS_H

// The command lines of spead_recv and spead_send as typed structs (the shape of
// spead2's src/spead2_cmdline.h): each adds its options to a description, bound to its
// fields, and checks and converts them once after parsing into the library's configs.
// The ibverbs flags, which both tools have, are one struct.

#include "flag_error.h"
#include "heap_generator.h"
#include "listen_options.h"
#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/send_rdma.h>
#include <gnuradio/spead/send_stream.h>
#include <gnuradio/spead/send_tcp.h>
#include <gnuradio/spead/send_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <boost/program_options.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace apps {

/*! --ibv, --ibv-vector and --ibv-max-poll, and --bind, which --ibv needs. */
struct ibv_options {
    bool ibv = false;
    std::optional<std::string> bind; //!< IPv4 address or netdev name
    std::optional<int> comp_vector;
    std::optional<int> max_poll;

    /*! --bind, described by \p help. */
    void add_bind_to(boost::program_options::options_description& options,
                     const char* help);
    /*! --ibv ("\p verb through ibverbs ..."), --ibv-vector and --ibv-max-poll
     * (described by \p max_poll_help). */
    void add_to(boost::program_options::options_description& options,
                const std::string& verb,
                const char* max_poll_help);
    /*! \throws boost::program_options::error for --ibv without --bind (naming what
     * the interface's RDMA device \p does, with an \p example address) and for tuning
     * flags without --ibv */
    void check(const std::string& does, const std::string& example) const;

    /*! The interface, completion vector and poll count into an ibverbs config.
     * \throws boost::program_options::error naming the flag of a bad value */
    template <typename Config>
    void apply(Config& config) const
    {
        with_flag("--bind", [&] { config.set_interface(*bind); });
        if (comp_vector)
            config.set_comp_vector(*comp_vector);
        if (max_poll)
            with_flag("--ibv-max-poll", [&] { config.set_max_poll(*max_poll); });
    }
};

/*! What both tools print besides their results (issue 35's --progress and --metrics
 * belong here too). */
struct output_options {
    bool all_stats = false; //!< every counter, not only the non-zero ones

    void add_to(boost::program_options::options_description& options);
};

/*! spead_recv's receiver: how each stream is configured and how it receives. */
struct receiver_options {
    bool quiet = false;
    std::uint64_t heaps = 0; //!< stop after this many (0: no limit)
    std::optional<std::size_t> buffer;
    std::optional<std::size_t> packet;
    ibv_options ibv;
    std::size_t max_heaps = 4;
    std::optional<std::size_t> concurrent_heaps; //!< spead2_recv's name for max_heaps
    std::size_t threads = 1;
    bool joint = false;
    bool descriptors = false;
    std::size_t ring_heaps = 8;
    std::size_t max_heap_size = 64 << 20;
    std::string incomplete = "drop";
    std::string full_queue_policy = "block"; //!< as spead2_recv: a burst waits
    bool ignore_stop = false;
    bool pyspead = false;
    bool verify = false;
    bool tcp = false;
    bool rdma = false;
    listen_options listen; //!< with --tcp or --rdma
    output_options output;
    /*! Continuous mode (spead.source output_mode=continuous) when not 0. */
    std::uint64_t timestamp_item = 0;
    std::uint64_t timestamp_step = 0;
    std::size_t substream_count = 1;
    std::uint64_t substream_item = 0;
    std::uint64_t first_substream = 0;
    std::string substream_ids; //!< "8-11", "8,9,10,11": substream_set::parse()
    std::size_t window_heaps = 64;

    /*! --timestamp-item given: data heaps are placed by timestamp (pop_chunk()). */
    bool continuous() const { return timestamp_item != 0; }

    /*! spead_recv's options after --help and --help-stats, and --tcp. */
    void add_to(boost::program_options::options_description& options);
    /*! \throws boost::program_options::error naming the flag and the fix */
    void check(const boost::program_options::variables_map& vm);

    /*! The stream config (after check()). */
    recv::stream_config stream_config() const { return d_stream; }
    /*! A kernel UDP reader's config for \p endpoints ("HOST:PORT,..."). */
    recv::udp_config udp_config(const std::string& endpoints) const;
    /*! An ibverbs reader's config for \p endpoints.
     * \throws boost::program_options::error naming the flag of a bad value */
    recv::udp_ibv_config ibv_config(const std::string& endpoints) const;
    /*! --tcp: a listener on \p endpoint (HOST:PORT or :PORT), by default for one
     * sender whose disconnection ends the stream, as spead2_recv --tcp (listen).
     * \throws boost::program_options::error naming the flag of a bad value */
    recv::tcp_config tcp_config(const std::string& endpoint) const;
    /*! --rdma: a listener on \p endpoint (verbs://ADDR:PORT or verbs://:PORT), as
     * with --tcp. */
    recv::rdma_config rdma_config(const std::string& endpoint) const;

private:
    recv::stream_config d_stream;
};

/*! spead_send's generator and sender. */
struct sender_options {
    generator_config generator;
    std::size_t packet = 1472;
    double rate_gbps = 0.0;
    std::size_t burst = 65536;
    double burst_rate_ratio = send::stream_config::default_burst_rate_ratio;
    int ttl = 1;
    std::size_t buffer = send::udp_config::default_buffer_size;
    ibv_options ibv;
    std::optional<std::string> pcap;
    bool descriptors = false;
    bool no_stop = false;
    bool tcp = false;
    bool rdma = false;
    bool reconnect = false; //!< --tcp, --rdma: connect again after a loss
    output_options output;

    /*! spead_send's options after --help. */
    void add_to(boost::program_options::options_description& options);
    /*! \throws boost::program_options::error naming the flag and the fix */
    void check();

    /*! The stream config: packet size, rate, burst and queue (after check()).
     * \throws boost::program_options::error naming the flag of a bad value */
    send::stream_config stream_config() const;
    /*! A kernel UDP sender's config for \p endpoints (or the capture's addresses). */
    send::udp_config udp_config(const std::string& endpoints) const;
    /*! An ibverbs sender's config for \p endpoints. */
    send::udp_ibv_config ibv_config(const std::string& endpoints) const;
    /*! --tcp: a connection to \p endpoint (one HOST:PORT). */
    send::tcp_config tcp_config(const std::string& endpoint) const;
    /*! --rdma: a connection to \p endpoint (verbs://HOST:PORT). */
    send::rdma_config rdma_config(const std::string& endpoint) const;
};

} // namespace apps
} // namespace spead
} // namespace gr

#endif
