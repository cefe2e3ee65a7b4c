/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_TOOL_OUTPUT_H
#define INCLUDED_SPEAD_APPS_TOOL_OUTPUT_H

// Where the tools' words go, as spead2's tools have it: results and counters on
// stdout, the library's log lines (warnings, errors) on stderr, so `tool > file`
// keeps only results; and the counters that say something (the non-zero ones) unless
// every one is asked for.

#include <gnuradio/logger.h>
#include <gnuradio/spead/stats.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <boost/program_options.hpp>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

namespace gr {
namespace spead {
namespace apps {

/*! GNU Radio's log lines to stderr (Debian's gnuradio-runtime.conf sends them to
 * stdout), in its usual form. */
inline void log_to_stderr()
{
    auto backend = std::dynamic_pointer_cast<spdlog::sinks::dist_sink_mt>(
        gr::logging::singleton().default_backend());
    if (!backend)
        return;
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    sink->set_pattern("%n :%l: %v");
    backend->set_sinks({ sink });
}

/*! "name: value" lines of \p counters (name, value pairs): the non-zero ones, or
 * with \p all every one. */
template <typename Counters>
void print_counters(const Counters& counters, bool all, std::ostream& out = std::cout)
{
    for (const auto& [name, value] : counters)
        if (all || value != 0)
            out << name << ": " << value << "\n";
}

/*! --help and --help-stats, which answer_help() answers. */
inline void add_help(boost::program_options::options_description& options)
{
    options.add_options()("help,h", "show this help")(
        "help-stats", "list the statistics with their meaning");
}

/*!
 * --help (the options) and --help-stats (every \p Stat counter with its meaning):
 * prints what \p vm asks for; true when the tool is then done.
 */
template <typename Stat>
bool answer_help(const boost::program_options::variables_map& vm,
                 const boost::program_options::options_description& options)
{
    if (vm.count("help")) {
        std::cout << options;
        return true;
    }
    if (!vm.count("help-stats"))
        return false;
    for (std::size_t i = 0; i < counter_set<Stat>::size; i++) {
        const auto s = static_cast<Stat>(i);
        std::cout << std::left << std::setw(36) << stat_name(s) << stat_description(s)
                  << "\n";
    }
    return true;
}

} // namespace apps
} // namespace spead
} // namespace gr

#endif
