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
#include "api_metrics.h"

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
        "Send settings (as spead2.send.StreamConfig), rate in bytes per second; "
        "rate_method is software pacing (RateMethod.HW is refused; docs/python.md).");
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
    def_field(cls,
              "burst_rate_ratio",
              &C::get_burst_rate_ratio,
              &C::set_burst_rate_ratio,
              its_config());
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
    def_metrics_field<py_send_config>(cls);
    def_keyword_config(cls).def_property_readonly(
        "burst_rate",
        [](const py_send_config& c) {
            return c.config.get_rate() * c.config.get_burst_rate_ratio();
        },
        "rate x burst_rate_ratio, as spead2 (bytes per second).");
    const C defaults;
    cls.attr("DEFAULT_MAX_PACKET_SIZE") = defaults.get_max_packet_size();
    cls.attr("DEFAULT_MAX_HEAPS") = defaults.get_max_heaps();
    cls.attr("DEFAULT_BURST_SIZE") = defaults.get_burst_size();
    cls.attr("DEFAULT_BURST_RATE_RATIO") = C::default_burst_rate_ratio;
    cls.attr("DEFAULT_RATE_METHOD") = rate_method::automatic;
}

} // namespace

void bind_send_configs(py::module& m)
{
    bind_link_config<send::udp_config>(m, "UdpConfig", "a kernel UDP sender");
    bind_link_config<py_send_udp_ibv>(m, "UdpIbvConfig", "an ibverbs sender");
    bind_link_config<send::tcp_config>(m, "TcpConfig", "a SPEAD-over-TCP sender");
    bind_link_config<send::rdma_config>(m, "RdmaConfig", "a SPEAD-over-RDMA sender");
    bind_stream_config(m);
}

} // namespace python
} // namespace spead
} // namespace gr
