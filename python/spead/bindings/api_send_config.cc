/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The send configs of the spead2-compatible API (gnuradio.spead._send): StreamConfig
 * over send::stream_config with spead2's pacing fields, RateMethod, and the link
 * configs of the streams: UdpConfig, UdpIbvConfig, TcpConfig and RdmaConfig. */

#include "api_link_configs.h"

#include <cmath>

namespace gr {
namespace spead {
namespace python {

namespace {

void bind_stream_config(py::module& m)
{
    py::enum_<rate_method>(m, "RateMethod")
        .value("SW", rate_method::sw)
        .value("HW", rate_method::hw)
        .value("AUTO", rate_method::automatic);

    py::class_<py_send_config> cls(
        m,
        "StreamConfig",
        "Send settings (as spead2.send.StreamConfig), checked by every setter; rate is "
        "in bytes per second (0: as fast as possible). burst_rate_ratio and rate_method "
        "are spead2's catch-up and hardware pacing, which gr-spead's limiter does not "
        "have: only their defaults (and RateMethod.SW) are accepted.");
    using C = send::stream_config;
    // A message size: an RdmaStream sends messages up to 1 GiB; UDP and TCP streams
    // check it as a packet when they are made.
    def_field(cls,
              "max_packet_size",
              &C::get_max_packet_size,
              &C::set_max_message_size,
              its_config());
    def_field(cls, "rate", &C::get_rate, &C::set_rate, its_config());
    def_field(cls, "burst_size", &C::get_burst_size, &C::set_burst_size, its_config());
    def_field(cls, "max_heaps", &C::get_max_heaps, &C::set_max_heaps, its_config());
    cls.def_property(
        "burst_rate_ratio",
        [](const py_send_config& c) { return c.burst_rate_ratio; },
        [](py_send_config& c, const py::handle& v) {
            const double ratio = field_value<double>(v, "burst_rate_ratio");
            const std::string text = py::repr(v).cast<std::string>();
            if (!std::isfinite(ratio) || ratio < 1.0)
                throw py::value_error("burst_rate_ratio: " + text +
                                      " must be at least 1.0 and finite");
            if (ratio != py_send_config::default_burst_rate_ratio)
                throw py::value_error(
                    "burst_rate_ratio: " + text +
                    " is not supported; gr-spead's rate limiter never sends faster than "
                    "rate to catch up (leave the default 1.05)");
            c.burst_rate_ratio = ratio;
        });
    cls.def_property(
        "rate_method",
        [](const py_send_config& c) { return c.method; },
        [](py_send_config& c, const py::handle& v) {
            const auto method = field_value<rate_method>(v, "rate_method");
            if (method == rate_method::hw)
                throw py::value_error(
                    "rate_method: RateMethod.HW is not supported; "
                    "gr-spead paces in software (RateMethod.SW or AUTO)");
            c.method = method;
        });
    def_member_field(cls, "allow_hw_rate", &py_send_config::allow_hw_rate);
    def_keyword_config(cls).def_property_readonly(
        "burst_rate",
        [](const py_send_config& c) { return c.config.get_rate() * c.burst_rate_ratio; },
        "rate x burst_rate_ratio, as spead2 (bytes per second).");
    const C defaults;
    cls.attr("DEFAULT_MAX_PACKET_SIZE") = defaults.get_max_packet_size();
    cls.attr("DEFAULT_MAX_HEAPS") = defaults.get_max_heaps();
    cls.attr("DEFAULT_BURST_SIZE") = defaults.get_burst_size();
    cls.attr("DEFAULT_BURST_RATE_RATIO") = py_send_config::default_burst_rate_ratio;
    cls.attr("DEFAULT_RATE_METHOD") = rate_method::automatic;
}

} // namespace

void bind_own_fields(py::class_<send::udp_config>& cls)
{
    cls.doc() =
        "Settings of a kernel UDP sender (gr-spead's; UdpStream builds one): endpoints "
        "are destinations, one substream each.";
    using C = send::udp_config;
    def_field(cls, "ttl", &C::get_ttl, &C::set_ttl);
}

void bind_own_fields(py::class_<py_send_udp_ibv>& cls)
{
    cls.doc() =
        "Settings of an ibverbs sender (as spead2.send.UdpIbvConfig), checked by every "
        "setter; buffer_size 0 means the default. memory_regions: objects with a buffer "
        "(numpy arrays) whose items are sent without a copy.";
    // spead2's ttl is a uint8: 256 is a TypeError there, so here too.
    cls.def_property(
        "ttl",
        [](const py_send_udp_ibv& c) { return c.config.get_ttl(); },
        [](py_send_udp_ibv& c, const py::handle& v) {
            c.config.set_ttl(field_value<std::uint8_t>(v, "ttl"));
        });
    // Buffers, registered for zero copy when the stream is made (api_send.cc).
    cls.def_property(
        "memory_regions",
        [](const py_send_udp_ibv& c) { return c.memory_regions; },
        [](py_send_udp_ibv& c, const py::object& v) { c.memory_regions = py::list(v); });
}

void bind_own_fields(py::class_<send::tcp_config>& cls)
{
    cls.doc() =
        "Settings of a SPEAD-over-TCP sender (gr-spead's; TcpStream builds one): the "
        "receiver 'host:port', the local interface, and how it connects.";
    using C = send::tcp_config;
    def_field(cls, "interface", &C::get_interface, &C::set_interface);
}

void bind_own_fields(py::class_<send::rdma_config>& cls)
{
    cls.doc() =
        "Settings of a SPEAD-over-RDMA sender (gr-spead's; RdmaStream builds one): the "
        "receiver 'verbs://HOST:PORT', the interface, and how it connects "
        "(docs/links.md).";
    using C = send::rdma_config;
    def_field(cls, "inline_bytes", &C::get_inline_bytes, &C::set_inline_bytes);
    def_field(cls, "send_depth", &C::get_send_depth, &C::set_send_depth);
}

void bind_send_configs(py::module& m)
{
    bind_stream_config(m);
    bind_link_config<send::udp_config>(m, "UdpConfig");
    bind_link_config<py_send_udp_ibv>(m, "UdpIbvConfig");
    bind_link_config<send::tcp_config>(m, "TcpConfig");
    bind_link_config<send::rdma_config>(m, "RdmaConfig");
}

} // namespace python
} // namespace spead
} // namespace gr
