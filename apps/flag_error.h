/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Turns a config setter's std::invalid_argument into a usage error that names the
// command-line flag the value came from, so the tools exit with status 2 and their
// help, as for any other bad flag.

#ifndef INCLUDED_SPEAD_APPS_FLAG_ERROR_H
#define INCLUDED_SPEAD_APPS_FLAG_ERROR_H

#include <boost/program_options/errors.hpp>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace apps {

/*! Runs \p set; its std::invalid_argument ("ttl: 300 is out of range...") becomes a
 * boost::program_options::error naming \p flag instead ("--ttl: 300 is out of
 * range..."). An empty \p flag keeps the message as it is. */
template <typename F>
void with_flag(const std::string& flag, F&& set)
{
    try {
        set();
    } catch (const std::invalid_argument& e) {
        std::string text = e.what();
        const auto colon = text.find(": ");
        if (colon != std::string::npos && text.find(' ') > colon)
            text.erase(0, colon + 2);
        throw boost::program_options::error(flag.empty() ? e.what() : flag + ": " + text);
    }
}

} // namespace apps
} // namespace spead
} // namespace gr

#endif
