/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_OPTIONS_H
#define INCLUDED_SPEAD_APPS_BENCH_OPTIONS_H

// spead_bench's command line, parsed and checked once into typed fields that every
// mode reads.

#include "bench_sender.h"
#include "rate_search.h"
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

struct bench_options {
    std::string mode = "mem"; //!< mem, send, recv, loopback, sink or rdma
    std::vector<std::size_t> packets{ 8972, 1472 };
    std::size_t heap_size = 1 << 20;
    std::uint64_t total_bytes = std::uint64_t(1) << 30; //!< mem
    int repeat = 11;                                    //!< mem
    int round = 0;                                      //!< mem: pairing round (0: none)
    std::size_t threads = 1;                            //!< mem --continuous
    bool continuous = false;                            //!< mem, loopback
    bool alternate = false;                             //!< sink, loopback
    int pairs = 1; //!< loopback --alternate: searches of recv and loopback in turn
    double seconds = 3.0;
    int runs = 3;
    std::string rates_text = "2,4,6,8,10,12,14,16";
    search_options search;  //!< recv, loopback: --rates, --runs, --refine (after check())
    std::size_t buffer = 0; //!< recv, loopback: socket receive buffer
    std::size_t burst = 65536;
    std::size_t max_heap_size = 2 << 20;        //!< loopback
    std::size_t queue_heaps = 0;                //!< loopback
    std::vector<std::string> sources{ "none" }; //!< sink: --source, each in turn
    std::string dest;                           //!< send: empty for a discard socket
    std::string address = "127.0.0.1";          //!< rdma: the receivers' verbs address
    std::string sender_netns;                   //!< rdma: the senders' netns, empty: ours
    std::string csv;                            //!< the --csv file
    bool write_csv = false;                     //!< --csv was given (after check())

    /*! The name of a sink figure fed by \p source: \p bench itself for none (the
     * sink's own cost), else with the upstream named, e.g. sink_vs_send_null_source,
     * so that the figures of several sources sit apart in one CSV. */
    static std::string sink_figure(const std::string& bench, const std::string& source);

    /*! The options of `spead_bench --help`, bound to these fields. */
    void add_to(boost::program_options::options_description& options);
    /*! The positional mode, bound to \ref mode. */
    void add_mode_to(boost::program_options::options_description& hidden);
    /*! After parsing: the mode and the values checked, --rates parsed.
     * \throws std::invalid_argument naming the flag and the fix */
    void check(const boost::program_options::variables_map& vm);

    /*! The sender of a trial: \p packet-byte packets at \p rate_gbps (0: as fast as
     * possible) for --seconds, --heap-size heaps and --burst. */
    sender_options sender(std::size_t packet, double rate_gbps = 0.0) const;
};

/*! Parses "2,4,8" or "2 4 8" into rates. \throws std::invalid_argument */
std::vector<double> parse_rates(const std::string& text);

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
