/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_COMMAND_LINE_H
#define INCLUDED_SPEAD_APPS_COMMAND_LINE_H

// What every tool's main() does alike: parse its command line (options bound to typed
// fields, positional arguments in a hidden option), tell a UDP port from other
// arguments, and end its loop on Ctrl-C or SIGTERM.

#include <boost/program_options.hpp>
#include <atomic>
#include <csignal>
#include <string>

namespace gr {
namespace spead {
namespace apps {

/*! Parses \p argv: the \p visible options (--help lists them), and the \p hidden
 * option \p positional that takes up to \p count positional arguments (-1: all); then
 * notifies the fields bound to them. \throws boost::program_options::error */
inline boost::program_options::variables_map
parse_command_line(int argc,
                   char** argv,
                   const boost::program_options::options_description& visible,
                   const boost::program_options::options_description& hidden,
                   const char* positional,
                   int count,
                   int style = boost::program_options::command_line_style::default_style)
{
    namespace po = boost::program_options;
    po::positional_options_description p;
    p.add(positional, count);
    po::options_description all;
    all.add(visible).add(hidden);
    po::variables_map vm;
    po::store(
        po::command_line_parser(argc, argv).style(style).options(all).positional(p).run(),
        vm);
    po::notify(vm);
    return vm;
}

/*! A UDP port number as written: 1 to 5 decimal digits. */
inline bool is_udp_port(const std::string& text)
{
    if (text.empty() || text.size() > 5)
        return false;
    for (char c : text)
        if (c < '0' || c > '9')
            return false;
    return true;
}

/*! Set by SIGINT or SIGTERM once stop_on_signals() has run. */
inline std::atomic<bool> interrupted{ false };

/*! Ctrl-C and SIGTERM set \ref interrupted, which the tool's loop checks. */
inline void stop_on_signals()
{
    const auto on_signal = [](int) { interrupted = true; };
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
}

} // namespace apps
} // namespace spead
} // namespace gr

#endif
