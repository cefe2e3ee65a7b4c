/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PYTHON_API_LINK_CONFIGS_H
#define INCLUDED_SPEAD_PYTHON_API_LINK_CONFIGS_H

/* The link configs as Python sees them (recv and send UdpConfig, UdpIbvConfig,
 * TcpConfig, RdmaConfig), by bind_link_config(): what a family shares is bound once
 * for recv and send, as the C++ bases hold it once (udp_config_base,
 * udp_ibv_config_base, tcp_config_base, rdma_config_base, and what a listening or
 * dialling link adds), then what the receiving or sending side adds. */

#include "api_configs.h"

#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/send_rdma.h>
#include <gnuradio/spead/send_tcp.h>
#include <gnuradio/spead/send_udp.h>

namespace gr {
namespace spead {
namespace python {

/*! The property endpoint of a connected link's config: \p text(config), and the
 * config's set_endpoint(text). */
template <typename Cls, typename Text>
void def_endpoint(Cls& cls, Text text)
{
    using C = typename Cls::type;
    cls.def_property("endpoint", text, [](C& c, const py::handle& v) {
        c.set_endpoint(field_value<std::string>(v, "endpoint"));
    });
}

/*! The link config class T as \p name in \p m, the settings of \p what: the fields
 * its family shares (the C++ base's), its own, what a listening (recv) or dialling
 * (send) connected link adds, and the keyword constructor. */
template <typename T>
py::class_<T> bind_link_config(py::module& m, const char* name, const std::string& what)
{
    py::class_<T> cls(m, name, ("Settings of " + what + " (docs/python.md).").c_str());
    constexpr bool ibv =
        std::is_same_v<T, py_recv_udp_ibv> || std::is_same_v<T, py_send_udp_ibv>;
    constexpr bool udp = !ibv && std::is_base_of_v<udp_config_base<T>, T>;
    if constexpr (ibv) {
        // udp_ibv_config_base: as in spead2, endpoints and interface are kept as
        // given and checked when the reader or stream is made
        using C = decltype(T::config);
        cls.def_property(
            "endpoints",
            [](const T& w) { return w.endpoints; },
            [](T& w, const py::handle& v) {
                w.endpoints = endpoint_pairs_value(v, "endpoints");
            });
        def_member_field(cls, "interface_address", &T::interface_address);
        def_field(
            cls, "buffer_size", &C::get_buffer_size, &C::set_buffer_size, its_config());
        def_field(
            cls, "comp_vector", &C::get_comp_vector, &C::set_comp_vector, its_config());
        def_field(cls, "max_poll", &C::get_max_poll, &C::set_max_poll, its_config());
        cls.attr("DEFAULT_BUFFER_SIZE") = C::default_buffer_size; // spead2's constants
        cls.attr("DEFAULT_MAX_POLL") = C::default_max_poll;
        if constexpr (std::is_same_v<T, py_recv_udp_ibv>) {
            def_field(cls, "max_size", &C::get_max_size, &C::set_max_size, its_config());
            cls.attr("DEFAULT_MAX_SIZE") = C::default_max_size;
        } else {
            // spead2's ttl is a uint8: 256 is a TypeError there, so here too
            cls.def_property(
                "ttl",
                [](const T& c) { return c.config.get_ttl(); },
                [](T& c, const py::handle& v) {
                    c.config.set_ttl(field_value<std::uint8_t>(v, "ttl"));
                });
            // buffers, registered for zero copy when the stream is made (api_send.cc)
            cls.def_property(
                "memory_regions",
                [](const T& c) { return c.memory_regions; },
                [](T& c, const py::object& v) { c.memory_regions = py::list(v); });
        }
    } else if constexpr (udp) {
        // udp_config_base: endpoints as [(host, port), ...] or the C++ text
        // ("239.1.2.3+3:7148"), checked when set
        cls.def_property(
            "endpoints",
            [](const T& c) { return endpoint_list(c.get_endpoints()); },
            [](T& c, const py::handle& v) {
                c.set_endpoints(
                    py::isinstance<py::str>(v)
                        ? v.cast<std::string>()
                        : endpoints_text(endpoint_pairs_value(v, "endpoints")));
            });
        def_field(cls, "interface", &T::get_interface, &T::set_interface);
        def_field(cls, "buffer_size", &T::get_buffer_size, &T::set_buffer_size);
        if constexpr (T::receives)
            def_field(cls, "max_size", &T::get_max_size, &T::set_max_size);
        else
            def_field(cls, "ttl", &T::get_ttl, &T::set_ttl);
    } else if constexpr (std::is_base_of_v<tcp_config_base<T>, T>) {
        def_endpoint(cls, [](const T& c) { // "host:port", IPv6 in brackets
            if (!c.has_endpoint())
                return std::string();
            const auto& ep = c.get_endpoint();
            const auto host = ep.address().to_string();
            return (ep.address().is_v6() ? "[" + host + "]" : host) + ":" +
                   std::to_string(ep.port());
        });
        def_field(cls, "buffer_size", &T::get_buffer_size, &T::set_buffer_size);
        def_seconds(cls, "peer_timeout", &T::get_peer_timeout, &T::set_peer_timeout);
        if constexpr (!T::receives) // the local interface a sender connects from
            def_field(cls, "interface", &T::get_interface, &T::set_interface);
    } else {
        def_endpoint(cls, [](const T& c) { // a verbs:// URI
            return c.has_endpoint()
                       ? "verbs://" + c.get_host() + ":" + std::to_string(c.get_port())
                       : std::string();
        });
        def_field(cls, "interface", &T::get_interface, &T::set_interface);
        if constexpr (T::receives) { // the queues of RDMA writes and of receives
            def_field(cls,
                      "rdma_connections",
                      &T::get_rdma_connections,
                      &T::set_rdma_connections);
            def_field(cls, "rdma_depth", &T::get_rdma_depth, &T::set_rdma_depth);
            def_field(cls, "recv_depth", &T::get_recv_depth, &T::set_recv_depth);
        } else { // bytes sent inline, and sends in flight
            def_field(cls, "inline_bytes", &T::get_inline_bytes, &T::set_inline_bytes);
            def_field(cls, "send_depth", &T::get_send_depth, &T::set_send_depth);
        }
    }
    if constexpr (ibv || udp) {
        // datagrams: nothing to admit or dial
    } else if constexpr (T::receives) {
        // what a listening link admits, and when it stops listening
        def_field(
            cls, "max_connections", &T::get_max_connections, &T::set_max_connections);
        def_field(cls, "allowed_peers", &T::get_allowed_peers, &T::set_allowed_peers);
        def_field(
            cls, "max_packet_size", &T::get_max_packet_size, &T::set_max_packet_size);
        def_field(cls, "keep_listening", &T::get_keep_listening, &T::set_keep_listening);
        def_seconds(cls, "idle_timeout", &T::get_idle_timeout, &T::set_idle_timeout);
    } else {
        // how a dialling link connects, and again after a loss (min, max seconds)
        def_seconds(
            cls, "connect_timeout", &T::get_connect_timeout, &T::set_connect_timeout);
        def_field(cls, "reconnect", &T::get_reconnect, &T::set_reconnect);
        cls.def_property(
            "reconnect_backoff",
            [](const T& c) {
                return py::make_tuple(seconds_of(c.get_reconnect_min()),
                                      seconds_of(c.get_reconnect_max()));
            },
            [](T& c, const py::handle& v) {
                const auto pair = field_value<std::pair<py::object, py::object>>(
                    v, "reconnect_backoff");
                c.set_reconnect_backoff(milliseconds_value(pair.first, "reconnect_min"),
                                        milliseconds_value(pair.second, "reconnect_max"));
            });
    }
    return def_keyword_config(cls);
}

} // namespace python
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PYTHON_API_LINK_CONFIGS_H */
