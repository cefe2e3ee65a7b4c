/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* What every bound config uses (api_configs.h): the keyword constructor's loop, the
 * repr, durations in seconds, endpoint lists, and the wrappers' conversions to the C++
 * configs. */

#include "api_configs.h"

#include <cmath>

namespace gr {
namespace spead {
namespace python {

namespace {

/*! Names of the writable properties of \p type (its fields), its bases' first, in
 * definition order. */
std::vector<std::string> property_names(const py::handle& type)
{
    const py::object property = py::module::import("builtins").attr("property");
    std::vector<std::string> names;
    const py::tuple mro = type.attr("__mro__");
    for (std::size_t i = mro.size(); i-- > 0;)
        for (auto item : mro[i].attr("__dict__").attr("items")()) {
            const auto pair = item.cast<py::tuple>(); // the class dict is a mappingproxy
            if (py::isinstance(pair[1], property) && !pair[1].attr("fset").is_none())
                names.push_back(pair[0].cast<std::string>());
        }
    return names;
}

/*! "a, b, c" */
std::string joined(const std::vector<std::string>& names)
{
    return py::str(", ").attr("join")(names).cast<std::string>();
}

} // namespace

void set_fields(py::object& self, const py::kwargs& kwargs)
{
    const auto names = property_names(self.get_type());
    for (auto item : kwargs) {
        const auto key = item.first.cast<std::string>();
        if (std::find(names.begin(), names.end(), key) == names.end())
            throw py::type_error(key + ": not a field of " +
                                 self.get_type().attr("__name__").cast<std::string>() +
                                 "; give " + joined(names));
        py::setattr(self, item.first, item.second);
    }
}

void document_fields(const py::object& cls)
{
    const py::object doc = cls.attr("__doc__");
    cls.attr("__doc__") =
        (doc.is_none() ? std::string() : doc.cast<std::string>() + " ") +
        "Fields (also the constructor's keywords): " + joined(property_names(cls)) + ".";
}

std::string fields_repr(const py::object& self)
{
    std::vector<std::string> fields;
    for (const auto& name : property_names(self.get_type()))
        fields.push_back(name + "=" +
                         py::repr(self.attr(name.c_str())).cast<std::string>());
    return self.get_type().attr("__name__").cast<std::string>() + "(" + joined(fields) +
           ")";
}

std::chrono::milliseconds milliseconds_value(const py::handle& value, const char* name)
{
    const py::object timedelta = py::module::import("datetime").attr("timedelta");
    const double seconds = py::isinstance(value, timedelta)
                               ? value.attr("total_seconds")().cast<double>()
                               : field_value<double>(value, name);
    if (!std::isfinite(seconds))
        throw py::value_error(std::string(name) + ": " + std::to_string(seconds) +
                              " is not a duration; give seconds, e.g. 5.0");
    // Beyond a year every setter refuses: clamp so the conversion cannot overflow.
    const double ms = std::max(-1e12, std::min(1e12, seconds * 1000.0));
    return std::chrono::milliseconds(std::llround(ms));
}

double seconds_of(std::chrono::milliseconds ms) { return ms.count() / 1000.0; }

endpoint_pairs endpoint_pairs_value(const py::handle& value, const char* name)
{
    try {
        return value.cast<endpoint_pairs>();
    } catch (const py::cast_error&) {
        throw py::type_error(std::string(name) + ": " +
                             py::repr(value).cast<std::string>() +
                             " is not a list of (host, port); give e.g. "
                             "[('239.1.2.3', 7148)] with ports 0 to 65535");
    }
}

std::string endpoints_text(const endpoint_pairs& endpoints)
{
    std::string text;
    for (const auto& [host, port] : endpoints) {
        const std::string h = host.empty() ? "0.0.0.0" : host;
        text += (text.empty() ? "" : ",") +
                (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" +
                std::to_string(port);
    }
    return text;
}

recv::stream_config merged(const py_recv_config& config, const py_ring_config& ring)
{
    recv::stream_config out = config.config;
    out.set_queue_heaps(ring.config.get_queue_heaps());
    out.set_incomplete_heaps(ring.config.get_incomplete_heaps());
    out.set_full_queue_policy(ring.config.get_full_queue_policy());
    return out;
}

template <typename Config>
Config py_udp_ibv<Config>::resolved() const
{
    Config out = config;
    out.set_endpoints(endpoints_text(endpoints));
    if (!interface_address.empty())
        out.set_interface(interface_address);
    return out;
}

template struct py_udp_ibv<recv::udp_ibv_config>;
template struct py_udp_ibv<send::udp_ibv_config>;

} // namespace python
} // namespace spead
} // namespace gr
