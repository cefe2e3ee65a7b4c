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
// arguments, end its loop on Ctrl-C or SIGTERM, and turn errors into exit statuses.

#include <boost/program_options.hpp>
#include <atomic>
#include <csignal>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

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

/*! As above, for a tool whose positional arguments are all strings of one kind (its
 * sources, its destinations): they go to \p values. */
inline boost::program_options::variables_map
parse_command_line(int argc,
                   char** argv,
                   const boost::program_options::options_description& visible,
                   const char* positional,
                   std::vector<std::string>& values,
                   int style = boost::program_options::command_line_style::default_style)
{
    boost::program_options::options_description hidden;
    hidden.add_options()(positional, boost::program_options::value(&values), positional);
    return parse_command_line(argc, argv, visible, hidden, positional, -1, style);
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

/*!
 * A tool's exit status from \p body (its main() after the options are declared): a
 * usage error (boost::program_options::error) is said with the usage, \p options, and
 * gives 2; any other error is said and gives 1; otherwise what \p body returns.
 */
template <typename Body>
int exit_status(const char* tool,
                const boost::program_options::options_description& options,
                Body&& body)
{
    try {
        return body();
    } catch (const boost::program_options::error& e) {
        std::cerr << tool << ": " << e.what() << "\n\n" << options;
        return 2;
    } catch (const std::exception& e) {
        std::cerr << tool << ": " << e.what() << "\n";
        return 1;
    }
}

} // namespace apps
} // namespace spead
} // namespace gr

#endif
