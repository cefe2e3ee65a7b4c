/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_BLOCK_CONFIG_PYTHON_H
#define INCLUDED_SPEAD_BLOCK_CONFIG_PYTHON_H

/* The blocks' options from Python: keywords (and positional arguments, in the order
 * of the former make()) become an option_list, each value converted for its option's
 * kind with a ValueError naming the option where it cannot be; help() lists the
 * options from the same list. */

#include <pybind11/pybind11.h>
#include <gnuradio/spead/block_options.h>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace python {

namespace py = pybind11;

/*! \p args and \p kwargs as options of \p block (`source`, `sink`).
 * \throws py::value_error naming an unknown, repeated or unconvertible option */
option_list options_from_python(const std::vector<option_info>& options,
                                const py::args& args,
                                const py::kwargs& kwargs,
                                const char* block);

/*! One value for \p option. \throws py::value_error naming the option */
option_value value_from_python(const option_info& option, const py::handle& value);

/*! The options as Python dicts: name, grc_id, tab, kind, default, doc. */
py::list options_to_python(const std::vector<option_info>& options);

/*! "Args:" and an entry per option (kind, default, documentation), for help(). */
std::string options_help(const std::vector<option_info>& options);

/*! Binds Config (source_config, sink_config): keyword constructor, set(name, value),
 * options(), and the block-level options as properties. */
void bind_block_configs(py::module& m);

} // namespace python
} // namespace spead
} // namespace gr

#endif
