/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_LISTEN_OPTIONS_H
#define INCLUDED_SPEAD_APPS_LISTEN_OPTIONS_H

// spead_recv's flags for a --tcp or --rdma listener: how many senders, which ones,
// whether to wait for more, and when an idle one is let go.

#include "flag_error.h"
#include <gnuradio/spead/recv_tcp.h>
#include <boost/program_options.hpp>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace apps {

/*! --max-connections, --allowed-peers, --keep-listening and --idle-timeout: how a
 * --tcp or --rdma listener takes senders (listen_config_base's settings). */
struct listen_options {
    std::size_t max_connections = 1; //!< as spead2_recv: one sender per SOURCE
    std::string allowed_peers;
    bool keep_listening = false;
    //! seconds without progress; 0: no bound. The library's default (10 s).
    double idle_timeout =
        std::chrono::duration<double>(recv::tcp_config::default_idle_timeout).count();

    void add_to(boost::program_options::options_description& options)
    {
        // clang-format off
        options.add_options()
            ("max-connections", boost::program_options::value(&max_connections)->default_value(1), "with --tcp or --rdma: senders connected at once to each SOURCE; more are refused (connections_refused)")
            ("allowed-peers", boost::program_options::value(&allowed_peers), "with --tcp or --rdma: the addresses and networks that may connect, e.g. 10.0.0.0/24,10.1.0.5 (default: any); others are refused (connections_refused)")
            ("keep-listening", boost::program_options::bool_switch(&keep_listening), "with --tcp or --rdma: after the senders disconnect, wait for new ones instead of ending (a stop heap ends only its sender's connection: end with --heaps or Ctrl-C)")
            ("idle-timeout", boost::program_options::value(&idle_timeout)->default_value(idle_timeout), "with --tcp or --rdma: end a connection that makes no progress for this many seconds, freeing its place: no whole packet since it connected (connections_idle_timeout) or a packet begun and not finished (connections_partial_frame); a sender idle between whole packets stays; 0: no bound");
        // clang-format on
    }
    /*! \throws boost::program_options::error for these flags without \p links */
    void check(const boost::program_options::variables_map& vm, bool links) const
    {
        if (!links && (!vm["max-connections"].defaulted() || vm.count("allowed-peers") ||
                       keep_listening || !vm["idle-timeout"].defaulted()))
            throw boost::program_options::error(
                "--max-connections, --allowed-peers, --keep-listening and "
                "--idle-timeout apply to connections: give --tcp or --rdma too");
    }
    /*! Into a listener's config. \throws boost::program_options::error naming the
     * flag of a bad value */
    template <typename Config>
    void apply(Config& config) const
    {
        with_flag("--max-connections",
                  [&] { config.set_max_connections(max_connections); });
        with_flag("--allowed-peers", [&] { config.set_allowed_peers(allowed_peers); });
        with_flag("--idle-timeout", [&] {
            if (!(idle_timeout >= 0))
                throw std::invalid_argument(
                    "idle_timeout: " + std::to_string(idle_timeout) +
                    " is not a duration; give seconds, 0: no bound");
            // The setter checks the range (in ms); the cap only keeps the cast defined.
            config.set_idle_timeout(std::chrono::milliseconds(
                static_cast<std::int64_t>(std::min(idle_timeout, 1e9) * 1000 + 0.5)));
        });
        config.set_keep_listening(keep_listening);
    }
};

} // namespace apps
} // namespace spead
} // namespace gr

#endif
