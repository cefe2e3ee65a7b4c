/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The receive configs of the spead2-compatible API (gnuradio.spead._recv):
 * StreamConfig, RingStreamConfig and StreamStatConfig over recv::stream_config and
 * the chunk config's statistics, and the link configs of the readers: UdpConfig,
 * UdpIbvConfig, TcpConfig and RdmaConfig. */

#include "api_link_configs.h"
#include "api_metrics.h"

#include <gnuradio/spead/memory_allocator.h>
#include <gnuradio/spead/stats.h>

namespace gr {
namespace spead {
namespace python {

namespace {

/*! spead2's StreamStatConfig: a statistic's name and how two values combine. */
struct stream_stat_config {
    std::string name;
    recv::stat_mode mode = recv::stat_mode::counter;
};

/*! spead2's standard statistics, in its order: gr-spead's first eight counters (the
 * same names and meanings) and worker_blocked (gr-spead's reader_waits_queue_full).
 * They are what StreamConfig.stats lists; every other gr-spead counter is still read
 * by name from StreamStats (recv/_stats.py). */
std::vector<stream_stat_config> builtin_stats()
{
    std::vector<stream_stat_config> out;
    for (const auto& kv : recv_stats().items()) {
        if (out.size() > std::size_t(recv_stat::search_dist))
            break;
        out.push_back({ kv.first,
                        out.size() == std::size_t(recv_stat::max_batch)
                            ? recv::stat_mode::maximum
                            : recv::stat_mode::counter });
    }
    out.push_back({ "worker_blocked", recv::stat_mode::counter });
    return out;
}

/*! A name a custom statistic may not take: spead2's or any gr-spead counter's. */
bool is_builtin_name(const std::string& name)
{
    if (name == "worker_blocked")
        return true;
    for (const auto& kv : recv_stats().items())
        if (kv.first == name)
            return true;
    return false;
}

std::vector<stream_stat_config> all_stats(const py_recv_config& c)
{
    auto out = builtin_stats();
    for (const auto& [name, mode] : c.custom_stats.get_stats())
        out.push_back({ name, mode });
    return out;
}

// spead2's MEMCPY_STD and MEMCPY_NONTEMPORAL (api_common.cc binds the names)
constexpr int memcpy_std_value = 0;
constexpr int memcpy_nontemporal_value = 1;

void bind_stream_stat_config(py::module& m)
{
    py::class_<stream_stat_config> cls(
        m,
        "StreamStatConfig",
        "A statistic of a stream (as spead2.recv.StreamStatConfig): its name and how two "
        "values combine (Mode.COUNTER adds, Mode.MAXIMUM keeps the larger).");
    py::enum_<recv::stat_mode>(cls, "Mode")
        .value("COUNTER", recv::stat_mode::counter)
        .value("MAXIMUM", recv::stat_mode::maximum);
    cls.def(py::init([](std::string name, recv::stat_mode mode) {
                return stream_stat_config{ std::move(name), mode };
            }),
            py::arg("name"),
            py::arg("mode") = recv::stat_mode::counter)
        .def_readonly("name", &stream_stat_config::name)
        .def_readonly("mode", &stream_stat_config::mode)
        .def("combine",
             [](const stream_stat_config& s, std::uint64_t a, std::uint64_t b) {
                 return s.mode == recv::stat_mode::maximum ? std::max(a, b) : a + b;
             })
        .def(
            "__eq__",
            [](const stream_stat_config& s, const stream_stat_config& o) {
                return s.name == o.name && s.mode == o.mode;
            },
            py::is_operator())
        .def(
            "__ne__",
            [](const stream_stat_config& s, const stream_stat_config& o) {
                return !(s.name == o.name && s.mode == o.mode);
            },
            py::is_operator())
        .def("__hash__",
             [](const stream_stat_config& s) {
                 return py::hash(py::make_tuple(s.name, int(s.mode)));
             })
        .def("__repr__", [](const stream_stat_config& s) {
            return "StreamStatConfig('" + s.name + "', Mode." +
                   (s.mode == recv::stat_mode::maximum ? "MAXIMUM" : "COUNTER") + ")";
        });
}

void bind_stream_config(py::module& m)
{
    using C = recv::stream_config;
    py::class_<py_recv_config> cls(
        m,
        "StreamConfig",
        "Assembler settings (as spead2.recv.StreamConfig), over the C++ "
        "recv::stream_config; max_heap_size is gr-spead's (docs/python.md).");
    def_field(cls, "max_heaps", &C::get_max_heaps, &C::set_max_heaps, its_config());
    def_field(cls, "substreams", &C::get_substreams, &C::set_substreams, its_config());
    cls.def_property(
        "bug_compat",
        [](const py_recv_config& c) { return c.bug_compat; },
        [](py_recv_config& c, const py::handle& v) {
            const int bits = field_value<int>(v, "bug_compat");
            check_bug_compat(bits);
            c.bug_compat = bits;
        });
    cls.def_property(
        "memcpy",
        [](const py_recv_config& c) {
            return c.config.get_memcpy() == recv::memcpy_function::nontemporal
                       ? memcpy_nontemporal_value
                       : memcpy_std_value;
        },
        [](py_recv_config& c, const py::handle& v) {
            const int value = field_value<int>(v, "memcpy");
            if (value != memcpy_std_value && value != memcpy_nontemporal_value)
                throw py::value_error("memcpy: " + std::to_string(value) +
                                      " is not a copy function; give MEMCPY_STD or "
                                      "MEMCPY_NONTEMPORAL");
            c.config.set_memcpy(value == memcpy_nontemporal_value
                                    ? recv::memcpy_function::nontemporal
                                    : recv::memcpy_function::standard);
        });
    // The Python object is kept so that it reads back as itself, as spead2's does.
    cls.def_property(
        "memory_allocator",
        [](const py_recv_config& c) { return c.memory_allocator; },
        [](py_recv_config& c, const py::object& v) {
            if (!v.is_none() && !py::isinstance<memory_allocator>(v))
                throw py::value_error(
                    "memory_allocator: " + py::repr(v).cast<std::string>() +
                    " is not a spead.MemoryAllocator; give an MmapAllocator, a "
                    "MemoryPool, or None");
            c.config.set_memory_allocator(
                v.is_none() ? nullptr : v.cast<std::shared_ptr<memory_allocator>>());
            c.memory_allocator = v;
        });
    def_field(cls,
              "stop_on_stop_item",
              &C::get_stop_on_stop_heap,
              &C::set_stop_on_stop_heap,
              its_config());
    def_field(cls,
              "allow_unsized_heaps",
              &C::get_allow_unsized_heaps,
              &C::set_allow_unsized_heaps,
              its_config());
    def_field(cls,
              "allow_out_of_order",
              &C::get_allow_out_of_order,
              &C::set_allow_out_of_order,
              its_config());
    def_member_field(cls, "stream_id", &py_recv_config::stream_id);
    def_field(cls,
              "explicit_start",
              &C::get_explicit_start,
              &C::set_explicit_start,
              its_config());
    def_field(
        cls, "max_heap_size", &C::get_max_heap_size, &C::set_max_heap_size, its_config());
    def_metrics_field<py_recv_config>(cls);
    def_keyword_config(cls)
        .def(
            "add_stat",
            [](py_recv_config& c, const std::string& name, recv::stat_mode mode) {
                if (is_builtin_name(name))
                    throw py::value_error("add_stat: a statistic named '" + name +
                                          "' exists; give another name");
                return c.custom_stats.add_stat(name, mode);
            },
            py::arg("name"),
            py::arg("mode") = recv::stat_mode::counter,
            "Adds a custom statistic; returns its index (for batch_stats in a "
            "placement callback).")
        .def_property_readonly("stats", &all_stats)
        .def(
            "get_stat_index",
            [](const py_recv_config& c, const std::string& name) {
                // spead2's nine at 0 to 8; custom ones where add_stat() put them (the
                // index a placement's batch_stats takes)
                const auto builtin = builtin_stats();
                for (std::size_t i = 0; i < builtin.size(); i++)
                    if (builtin[i].name == name)
                        return i;
                const auto& custom = c.custom_stats.get_stats();
                for (std::size_t i = 0; i < custom.size(); i++)
                    if (custom[i].first == name)
                        return recv::chunk_stream_config::first_custom_stat + i;
                throw py::index_error("name: no statistic '" + name +
                                      "'; see StreamConfig.stats");
            },
            py::arg("name"))
        .def("next_stat_index", [](const py_recv_config& c) {
            return recv::chunk_stream_config::first_custom_stat +
                   c.custom_stats.get_stats().size();
        });
    cls.attr("DEFAULT_MAX_HEAPS") = C().get_max_heaps();
    cls.attr("DEFAULT_MAX_HEAP_SIZE") = C().get_max_heap_size();
}

void bind_ring_stream_config(py::module& m)
{
    py::class_<py_ring_config> cls(m,
                                   "RingStreamConfig",
                                   "The queue of completed heaps (as "
                                   "spead2.recv.RingStreamConfig; docs/python.md).");
    using C = recv::stream_config;
    def_field(cls, "heaps", &C::get_queue_heaps, &C::set_queue_heaps, its_config());
    cls.def_property(
        "contiguous_only",
        [](const py_ring_config& c) {
            return c.config.get_incomplete_heaps() == recv::incomplete_heaps::drop;
        },
        [](py_ring_config& c, const py::handle& v) {
            c.config.set_incomplete_heaps(field_value<bool>(v, "contiguous_only")
                                              ? recv::incomplete_heaps::drop
                                              : recv::incomplete_heaps::deliver);
        });
    // Payload ranges are always kept: accepted either way.
    def_member_field(
        cls, "incomplete_keep_payload_ranges", &py_ring_config::keep_payload_ranges);
    cls.def_property(
        "full_queue_policy",
        [](const py_ring_config& c) {
            return c.config.get_full_queue_policy() == recv::full_queue_policy::block
                       ? "block"
                       : "drop";
        },
        [](py_ring_config& c, const py::handle& v) {
            c.config.set_full_queue_policy(recv::full_queue_policy_from_name(
                field_value<std::string>(v, "full_queue_policy")));
        });
    def_keyword_config(cls);
    // 8, not spead2's 4: room for a consumer's hiccups under the drop policy
    cls.attr("DEFAULT_HEAPS") = C().get_queue_heaps();
    cls.attr("FULL_QUEUE_POLICIES") = py::make_tuple("block", "drop");
}

} // namespace

void bind_recv_configs(py::module& m)
{
    bind_stream_stat_config(m);
    bind_stream_config(m);
    bind_ring_stream_config(m);
    bind_link_config<recv::udp_config>(m, "UdpConfig", "a kernel UDP reader");
    bind_link_config<py_recv_udp_ibv>(m, "UdpIbvConfig", "an ibverbs reader");
    bind_link_config<recv::tcp_config>(m, "TcpConfig", "a SPEAD-over-TCP reader");
    bind_link_config<recv::rdma_config>(m, "RdmaConfig", "a SPEAD-over-RDMA reader");
}

} // namespace python
} // namespace spead
} // namespace gr
