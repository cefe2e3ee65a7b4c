/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* spead2's chunk streams (gnuradio.spead._recv_chunk): ChunkStreamConfig and its
 * placements (a scipy.LowLevelCallable's C function, or gr-spead's declarative
 * ChunkPlacement), and the ring stream python/spead/recv/_chunk.py builds
 * ChunkRingStream on. */

#include "api_metrics.h"
#include "api_recv_chunk.h"
#include "api_recv_readers.h"

#include <gnuradio/spead/recv_chunk_place.h>
#include <algorithm>

namespace gr {
namespace spead {
namespace python {

namespace {

/*! spead2's callback_from_python: a tuple (a scipy.LowLevelCallable is one) whose
 * first element is a capsule named by the C signature. */
std::shared_ptr<recv::chunk_placement_policy> callback_placement(const py::object& obj)
{
    // spead2's exception classes: TypeError, IndexError for an empty tuple
    const char* what =
        "place: not a C callback; give a scipy.LowLevelCallable (e.g. of a "
        "numba cfunc) with signature 'void (void *, size_t)' or 'void "
        "(void *, size_t, void *)', or a ChunkPlacement";
    if (!py::isinstance<py::tuple>(obj))
        throw py::type_error(what);
    if (py::len(obj) == 0)
        throw py::index_error(what);
    if (!PyCapsule_CheckExact(obj.cast<py::tuple>()[0].ptr()))
        throw py::type_error(what);
    py::capsule capsule = obj.cast<py::tuple>()[0].cast<py::capsule>();
    const char* name = capsule.name();
    void* pointer = PyCapsule_GetPointer(capsule.ptr(), name);
    if (!pointer)
        throw py::error_already_set();
    const std::string signature = name ? name : "";
    if (signature == "void (void *, size_t)")
        return recv::make_callback_placement(
            reinterpret_cast<recv::chunk_place_c_function_no_data>(pointer));
    if (signature == "void (void *, size_t, void *)")
        return recv::make_callback_placement(
            reinterpret_cast<recv::chunk_place_c_function>(pointer),
            PyCapsule_GetContext(capsule.ptr()));
    throw py::value_error("place: the callback's signature is '" + signature +
                          "'; give 'void (void *, size_t)' or 'void (void *, "
                          "size_t, void *)'");
}

/*! recv.ChunkPlacement: a declarative placement, checked whole when made (as
 * spead.source checks its own), and the policy made from it. */
struct py_chunk_placement : recv::declarative_placement_config {
    std::shared_ptr<recv::chunk_placement_policy> policy;
};

/*! A chunk_ring_stream with the readers recv.Stream offers. */
class py_chunk_stream
{
public:
    py_chunk_stream(std::shared_ptr<thread_pool> pool,
                    const py_recv_config& config,
                    const py_chunk_stream_config& chunk_config,
                    ring_ptr data_ring,
                    ring_ptr free_ring)
        : d_pool(std::move(pool)), d_config(config), d_chunk_config(chunk_config)
    {
        if (!d_pool)
            throw std::invalid_argument("thread_pool: None; give a spead.ThreadPool()");
        d_stream = std::make_unique<recv::chunk_ring_stream>(
            config.config,
            chunk_config_of(config, chunk_config),
            std::move(data_ring),
            std::move(free_ring),
            config.stream_id);
        d_metrics = expose_stream(config.metrics, *d_stream);
    }
    ~py_chunk_stream()
    {
        d_metrics = {}; // no scrape reads the stream from here on
        py::gil_scoped_release release;
        d_stream.reset();
    }

    recv::chunk_ring_stream& stream() { return *d_stream; }
    counters custom_stats() const { return d_stream->get_custom_stats(); }
    const py_recv_config& config() const { return d_config; }
    const py_chunk_stream_config& chunk_config() const { return d_chunk_config; }

    void add_free_chunk(py_chunk& c) { add_free(*d_stream->free_ringbuffer(), c); }

    void stop()
    {
        py::gil_scoped_release release;
        d_stream->stop();
    }

private:
    std::shared_ptr<thread_pool> d_pool;
    py_recv_config d_config;
    py_chunk_stream_config d_chunk_config; // keeps the placement's object alive
    std::unique_ptr<recv::chunk_ring_stream> d_stream;
    metrics::registration d_metrics;
};

void bind_chunk_placement(py::module& m)
{
    py::class_<py_chunk_placement> cls(
        m,
        "ChunkPlacement",
        "gr-spead's declarative placement (no compiler needed): position k = timestamp "
        "// timestamp_step lies in chunk k // heaps_per_chunk, at heap index (k % "
        "heaps_per_chunk) * substreams + substream and byte offset heap index * "
        "heap_size. The substream is the substream_item's value minus first_substream "
        "(0 without a substream_item), or its place in substream_ids (one id per "
        "substream, in order). Checked when made, as spead.source checks its own; give "
        "it as ChunkStreamConfig(place=ChunkPlacement(...)).");
    cls.def(py::init([](std::uint64_t timestamp_item,
                        std::uint64_t timestamp_step,
                        std::size_t heap_size,
                        std::size_t heaps_per_chunk,
                        std::uint64_t substream_item,
                        const py::object& substreams,
                        std::uint64_t first_substream,
                        const std::vector<std::uint64_t>& substream_ids) {
                py_chunk_placement p;
                static_cast<recv::declarative_placement_config&>(
                    p) = { timestamp_item,
                           timestamp_step,
                           heap_size,
                           heaps_per_chunk,
                           substream_item,
                           // as many as substream_ids name (at least 1)
                           substreams.is_none()
                               ? std::max<std::size_t>(1, substream_ids.size())
                               : field_value<std::size_t>(substreams, "substreams"),
                           first_substream,
                           substream_ids };
                p.policy = recv::make_declarative_placement(p); // validates
                return p;
            }),
            py::kw_only(),
            py::arg("timestamp_item"),
            py::arg("timestamp_step"),
            py::arg("heap_size"),
            py::arg("heaps_per_chunk"),
            py::arg("substream_item") = 0,
            py::arg("substreams") = py::none(),
            py::arg("first_substream") = 0,
            py::arg("substream_ids") = std::vector<std::uint64_t>());
    using D = recv::declarative_placement_config;
    for (const auto& [name, field] :
         { std::pair{ "timestamp_item", &D::timestamp_item },
           std::pair{ "timestamp_step", &D::timestamp_step },
           std::pair{ "heap_size", &D::heap_bytes },
           std::pair{ "heaps_per_chunk", &D::heaps_per_chunk },
           std::pair{ "substream_item", &D::substream_item },
           std::pair{ "substreams", &D::substreams },
           std::pair{ "first_substream", &D::first_substream } })
        cls.def_readonly(name, field);
    cls.def_readonly("substream_ids", &D::substream_ids)
        .def_property_readonly("chunk_heaps", &D::chunk_heaps, "Heaps per chunk.")
        .def_property_readonly("chunk_bytes", &D::chunk_bytes, "Bytes of data per chunk.")
        .def(
            "make_chunk",
            [](const py_chunk_placement& p, const py::object& extra) {
                const py::module np = py::module::import("numpy");
                auto c = std::make_unique<py_chunk>();
                py_chunk::attach(
                    c->data_obj,
                    c->data,
                    c->data_size,
                    np.attr("zeros")(
                        py::make_tuple(p.heaps_per_chunk, p.substreams, p.heap_bytes),
                        np.attr("uint8")),
                    "data");
                py_chunk::attach(
                    c->present_obj,
                    c->present,
                    c->present_size,
                    np.attr("zeros")(py::make_tuple(p.heaps_per_chunk, p.substreams),
                                     np.attr("uint8")),
                    "present");
                py_chunk::attach(c->extra_obj, c->extra, c->extra_size, extra, "extra");
                return c;
            },
            py::arg("extra") = py::none(),
            "A Chunk with numpy buffers of the right sizes: data (uint8, "
            "heaps_per_chunk x substreams x heap_size) and present (uint8).")
        .def("__repr__", [](const py::object& self) { return fields_repr(self); });
}

py::object placement_of(const py_chunk_stream_config& c) { return c.place; }

/*! A ChunkPlacement's policy, or spead2's C callback (None: no placement yet). */
void set_placement(py_chunk_stream_config& c, const py::object& place)
{
    if (place.is_none())
        c.config.set_place(nullptr);
    else if (py::isinstance<py_chunk_placement>(place))
        c.config.set_place(place.cast<const py_chunk_placement&>().policy);
    else
        c.config.set_place(callback_placement(place));
    c.place = place;
}

void bind_chunk_stream_config(py::module& m)
{
    using W = py_chunk_stream_config;
    using C = recv::chunk_stream_config;
    py::class_<W> cls(
        m,
        "ChunkStreamConfig",
        "Settings of a chunk stream (as spead2.recv.ChunkStreamConfig; docs/python.md).");
    def_field(cls, "items", &C::get_items, &C::set_items, its_config());
    def_field(cls, "max_chunks", &C::get_max_chunks, &C::set_max_chunks, its_config());
    cls.def_property("place", &placement_of, &set_placement);
    def_field(cls,
              "max_heap_extra",
              &C::get_max_heap_extra,
              &C::set_max_heap_extra,
              its_config());
    def_keyword_config(cls)
        // Both return the config, as spead2's do, so that they chain in a call.
        .def(
            "enable_packet_presence",
            [](W& w, std::size_t payload_size) -> W& {
                w.config.enable_packet_presence(payload_size);
                return w;
            },
            py::arg("payload_size"),
            py::return_value_policy::reference_internal)
        .def(
            "disable_packet_presence",
            [](W& w) -> W& {
                w.config.disable_packet_presence();
                return w;
            },
            py::return_value_policy::reference_internal)
        .def_property_readonly("packet_presence_payload_size", [](const W& w) {
            return w.config.get_packet_presence_payload_size();
        });
    cls.attr("DEFAULT_MAX_CHUNKS") = C::default_max_chunks;
}

} // namespace

recv::chunk_stream_config chunk_config_of(const py_recv_config& config,
                                          const py_chunk_stream_config& chunk)
{
    recv::chunk_stream_config out = chunk.config;
    for (const auto& [name, mode] : config.custom_stats.get_stats())
        out.add_stat(name, mode);
    return out;
}

void bind_chunk_streams(py::module& m)
{
    bind_chunk_placement(m);
    bind_chunk_stream_config(m);

    py::class_<py_chunk_stream> cls(m, "_ChunkRingStream");
    bind_stream_face<py_chunk_stream>(cls);
    cls.def(py::init<std::shared_ptr<thread_pool>,
                     const py_recv_config&,
                     const py_chunk_stream_config&,
                     ring_ptr,
                     ring_ptr>(),
            py::arg("thread_pool"),
            py::arg("config"),
            py::arg("chunk_stream_config"),
            py::arg("data_ringbuffer"),
            py::arg("free_ringbuffer"))
        .def("add_free_chunk", &py_chunk_stream::add_free_chunk, py::arg("chunk"))
        .def("stop", &py_chunk_stream::stop)
        .def_property_readonly("config", &py_chunk_stream::config)
        .def_property_readonly("chunk_stream_config", &py_chunk_stream::chunk_config)
        .def_property_readonly(
            "data_ringbuffer",
            [](py_chunk_stream& s) { return s.stream().data_ringbuffer(); })
        .def_property_readonly("free_ringbuffer", [](py_chunk_stream& s) {
            return s.stream().free_ringbuffer();
        });
}

} // namespace python
} // namespace spead
} // namespace gr
