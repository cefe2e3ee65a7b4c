/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PYTHON_API_CONFIGS_H
#define INCLUDED_SPEAD_PYTHON_API_CONFIGS_H

/* The configs of the spead2-compatible API as Python sees them: keyword constructors
 * and properties over the C++ configs, whose setters are the only rules (a bad value
 * reaches Python as the setter's std::invalid_argument, a ValueError). Where spead2 has
 * a field the C++ config lacks, the wrapper here keeps it. api_recv_config.cc and
 * api_send_config.cc bind the classes; api_link_configs.h binds what the link configs
 * share once for recv and send. */

#include "api_common.h"

#include <pybind11/stl.h>

#include <gnuradio/spead/recv_chunk_stream.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/send_stream.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <type_traits>
#include <chrono>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace python {

// ---- the wrappers: a C++ config and the spead2 fields it lacks ----------------------

/*! recv.StreamConfig: the assembler's settings of recv::stream_config, the statistics
 * add_stat() declares (kept where C++ keeps them, a chunk_stream_config) and spead2's
 * fields gr-spead only stores or refuses (docs/python.md). */
struct py_recv_config {
    // spead2's default: a heap's packets in order only (C++'s default places any order)
    py_recv_config() { config.set_allow_out_of_order(false); }
    recv::stream_config config; // every assembler setting (not the ring's)
    recv::chunk_stream_config custom_stats;
    int bug_compat = 0;
    std::uintptr_t stream_id = 0;
    py::object memory_allocator = py::none(); // as given; config holds its C++ side
    std::string metrics; // gr-spead's: Prometheus listen address ("": none)
};

/*! recv.RingStreamConfig: the heap queue's settings of recv::stream_config. */
struct py_ring_config {
    py_ring_config()
    {
        // spead2's ring blocks its reader when full; C++'s default (drop) is the block's
        config.set_full_queue_policy(recv::full_queue_policy::block);
    }
    recv::stream_config config;       // queue_heaps, incomplete_heaps, full_queue_policy
    bool keep_payload_ranges = false; // always kept: stored for spead2
};

/*! The stream settings of \p config with the queue settings of \p ring. */
recv::stream_config merged(const py_recv_config& config, const py_ring_config& ring);

/*! recv.UdpIbvConfig and send.UdpIbvConfig: as in spead2, the endpoints and the
 * interface are kept as given and become the C++ config's when the reader or stream
 * is made (resolved()); every other field is the C++ config's. */
using endpoint_pairs = std::vector<std::pair<std::string, std::uint16_t>>;

template <typename Config>
struct py_udp_ibv {
    Config config;
    endpoint_pairs endpoints;
    std::string interface_address;

    /*! The C++ config with endpoints and interface set (invalid_argument if bad). */
    Config resolved() const;
};
using py_recv_udp_ibv = py_udp_ibv<recv::udp_ibv_config>;
struct py_send_udp_ibv : py_udp_ibv<send::udp_ibv_config> {
    py::object memory_regions = py::list(); // buffers, registered when the stream is made
};

/*! send.RateMethod: spead2's pacing choice; gr-spead paces in software only. */
enum class rate_method { sw, hw, automatic };

/*! send.StreamConfig: send::stream_config, max_packet_size taken as a message size
 * (RC links carry large ones; a UDP or TCP stream checks it as a packet when made),
 * and spead2's pacing fields, which gr-spead's limiter has only at their defaults. */
struct py_send_config {
    send::stream_config config;
    rate_method method = rate_method::automatic;
    bool allow_hw_rate = true;
    std::string metrics; // gr-spead's: Prometheus listen address ("": none)
};

/*! Binds recv.StreamConfig, RingStreamConfig, StreamStatConfig and the receive link
 * configs into \p m (api_recv_config.cc). */
void bind_recv_configs(py::module& m);
/*! Binds send.StreamConfig, RateMethod and the send link configs (api_send_config.cc). */
void bind_send_configs(py::module& m);

// ---- keyword constructors and named conversions
// ----------------------------------------

template <typename V>
struct is_pair : std::false_type {
};
template <typename A, typename B>
struct is_pair<std::pair<A, B>> : std::true_type {
};

/*! What a Python value must be to become a V (for TypeErrors). */
template <typename V>
std::string kind_of()
{
    if constexpr (std::is_same_v<V, bool>)
        return "True or False";
    else if constexpr (std::is_integral_v<V> && std::is_unsigned_v<V>) {
        if constexpr (sizeof(V) < sizeof(std::uint64_t))
            return "an integer from 0 to " +
                   std::to_string(std::numeric_limits<V>::max());
        else
            return "an unsigned integer; give an integer >= 0";
    } else if constexpr (std::is_integral_v<V>)
        return "an integer";
    else if constexpr (std::is_floating_point_v<V>)
        return "a number";
    else if constexpr (std::is_same_v<V, std::string>)
        return "a str";
    else if constexpr (std::is_enum_v<V>)
        return "one of its enum's values";
    else if constexpr (is_pair<V>::value)
        return "a pair; give (min, max)";
    else
        return "of the right type";
}

/*! \p value as a V for the field \p name: a TypeError naming it when the conversion
 * fails (pybind11's own message names no field), as spead2's conversions raise. */
template <typename V>
V field_value(const py::handle& value, const char* name)
{
    try {
        return value.cast<V>();
    } catch (const py::cast_error&) {
        throw py::type_error(std::string(name) + ": " +
                             py::repr(value).cast<std::string>() + " is not " +
                             kind_of<V>());
    }
}

/*! A duration field: seconds (a number or a datetime.timedelta) <-> milliseconds. */
std::chrono::milliseconds milliseconds_value(const py::handle& value, const char* name);
double seconds_of(std::chrono::milliseconds ms);

/*! [(host, port), ...] from Python (TypeError naming \p name, as spead2's conversion). */
endpoint_pairs endpoint_pairs_value(const py::handle& value, const char* name);
/*! \p endpoints as the C++ endpoint text "host:port,..." (IPv6 hosts in brackets, ""
 * as 0.0.0.0), which the config's parser checks. */
std::string endpoints_text(const endpoint_pairs& endpoints);
/*! [(address, port), ...] of \p endpoints. */
template <typename Endpoints>
py::list endpoint_list(const Endpoints& endpoints)
{
    py::list out;
    for (const auto& ep : endpoints)
        out.append(py::make_tuple(ep.address().to_string(), ep.port()));
    return out;
}

/*! Sets each keyword as the property of that name, in the order given (each setter
 * checks its value); TypeError for a keyword that names no property. */
void set_fields(py::object& self, const py::kwargs& kwargs);
/*! Appends the list of \p cls's fields to its docstring. */
void document_fields(const py::object& cls);
/*! "Class(field=value, ...)" of every property of \p self's class. */
std::string fields_repr(const py::object& self);

/*! spead2's keyword constructor, a __repr__ of the fields, copy.copy() and the fields
 * in the docstring for the config class \p cls (T default-constructible and copyable),
 * once its fields are bound. */
template <typename Cls>
Cls& def_keyword_config(Cls& cls)
{
    using T = typename Cls::type;
    document_fields(cls);
    return cls
        .def(py::init([](const py::kwargs& kwargs) {
            py::object self = py::cast(T());
            set_fields(self, kwargs);
            return self.cast<T>();
        }))
        .def("__repr__", [](const py::object& self) { return fields_repr(self); })
        .def("__copy__", [](const T& self) { return T(self); })
        .def("__deepcopy__", [](const T& self, const py::dict&) { return T(self); });
}

/*! Where def_field finds the C++ config: the bound object itself, or the
 * member `config` of a wrapper. */
struct itself {
    template <typename T>
    T& operator()(T& self) const
    {
        return self;
    }
};
struct its_config {
    template <typename W>
    auto& operator()(W& self) const
    {
        return self.config;
    }
};

/*! The property \p name over a getter and setter of the C++ config (member
 * functions, perhaps of a base) that \p access finds in the bound object: the value
 * is converted as the getter's type (TypeError naming the field), and the setter's
 * invalid_argument is the ValueError. */
template <typename Cls, typename Get, typename Set, typename Access = itself>
Cls& def_field(Cls& cls, const char* name, Get get, Set set, Access access = {})
{
    using T = typename Cls::type;
    using C = std::decay_t<decltype(access(std::declval<T&>()))>;
    using V = std::decay_t<decltype((std::declval<const C&>().*get)())>;
    return cls.def_property(
        name,
        [access, get](T& self) { return (access(self).*get)(); },
        [access, set, name](T& self, const py::handle& value) {
            (access(self).*set)(field_value<V>(value, name));
        });
}

/*! A millisecond setting of the C++ config as the property \p name, in seconds (a
 * float; a datetime.timedelta is accepted too). */
template <typename Cls, typename Get, typename Set, typename Access = itself>
Cls& def_seconds(Cls& cls, const char* name, Get get, Set set, Access access = {})
{
    using T = typename Cls::type;
    return cls.def_property(
        name,
        [access, get](T& self) { return seconds_of((access(self).*get)()); },
        [access, set, name](T& self, const py::handle& value) {
            (access(self).*set)(milliseconds_value(value, name));
        });
}

/*! The property \p name over a member the wrapper keeps (a spead2 field the C++ config
 * lacks), converted as its type (TypeError naming the field). */
template <typename Cls, typename V, typename W>
Cls& def_member_field(Cls& cls, const char* name, V W::*member)
{
    using T = typename Cls::type;
    return cls.def_property(
        name,
        [member](const T& self) { return self.*member; },
        [member, name](T& self, const py::handle& value) {
            self.*member = field_value<V>(value, name);
        });
}

} // namespace python
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PYTHON_API_CONFIGS_H */
