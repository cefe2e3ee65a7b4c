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

#include <gnuradio/spead/block_options.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <memory>
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

/*! Binds \p Block (source, sink) with its constructors: from a Config, and from the
 * options as keywords (or positions), documented from the option list. */
template <typename Block, typename Config, typename... Bases>
py::class_<Block, Bases..., std::shared_ptr<Block>> bind_block(py::module& m,
                                                               const char* name,
                                                               const char* class_doc,
                                                               const char* make_doc,
                                                               const char* stats_doc,
                                                               const char* transport_doc)
{
    // help(spead.NAME): the header's documentation, then every option.
    static const std::string doc =
        std::string(make_doc) + "\n\n" + options_help(Config::options());
    py::class_<Block, Bases..., std::shared_ptr<Block>> c(m, name, class_doc);
    c.def(py::init(&Block::make), py::arg("config") = Config(), doc.c_str())
        .def(py::init([name](const py::args& args, const py::kwargs& kwargs) {
                 return Block::make(
                     Config(options_from_python(Config::options(), args, kwargs, name)));
             }),
             doc.c_str())
        .def("stats", &Block::stats, stats_doc)
        .def("active_transport", &Block::active_transport, transport_doc);
    return c;
}

/*! Binds Config (source_config, sink_config): keyword constructor, set(name, value),
 * options(), and the block-level options as properties. */
void bind_block_configs(py::module& m);

} // namespace python
} // namespace spead
} // namespace gr

#endif
