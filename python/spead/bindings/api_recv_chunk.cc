/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The spead2-compatible chunk stream API (gnuradio.spead._recv_chunk): Chunk over
 * buffers the user gives, ChunkRingbuffer, the placements (a scipy.LowLevelCallable's
 * C function, or the declarative one) and the stream python/spead/recv/_chunk.py
 * builds ChunkRingStream on. */

#include "api_recv_chunk.h"

#include <pybind11/stl.h>

#include <gnuradio/spead/recv_chunk_stream.h>
#include <gnuradio/spead/recv_chunk_stream_group.h>
#include <gnuradio/spead/recv_pcap.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/substream_set.h>
#include <unordered_map>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

namespace gr {
namespace spead {
namespace python {

namespace {

using namespace std::chrono_literals;


/*! Chunks inside a ring or a stream, kept alive while C++ holds their pointers
 * (touched only with the GIL held). */
std::unordered_map<recv::stream_chunk*, py::object>& held()
{
    static auto* map = new std::unordered_map<recv::stream_chunk*, py::object>();
    return *map;
}

/*! Chunks rings let go of (chunk_ringbuffer::set_discard) whose references are still
 * to drop. A ring discards from any thread, perhaps holding a stream's or a group's
 * lock, so it never waits for the GIL: the references are dropped by a pending call
 * of the interpreter's, or by the next hold(), whichever comes first. */
struct discarded_chunks {
    std::mutex mutex;
    std::vector<recv::stream_chunk*> chunks;
    bool scheduled = false;
};

discarded_chunks& discarded()
{
    static auto* d = new discarded_chunks();
    return *d;
}

/*! Drops the references of the discarded chunks (the GIL held). */
int drop_discarded(void* = nullptr)
{
    std::vector<recv::stream_chunk*> chunks;
    {
        std::lock_guard<std::mutex> lock(discarded().mutex);
        chunks.swap(discarded().chunks);
        discarded().scheduled = false;
    }
    for (recv::stream_chunk* c : chunks) {
        auto it = held().find(c);
        if (it == held().end())
            continue;
        py::object last = std::move(it->second);
        held().erase(it);
    }
    return 0;
}

/*! The discard of every ring made from Python (any thread, no GIL needed). */
void discard_chunk(recv::stream_chunk* c)
{
    std::lock_guard<std::mutex> lock(discarded().mutex);
    discarded().chunks.push_back(c);
    // Py_AddPendingCall needs no GIL; when its queue is full, the next hold() drops
    // them, and the next discard tries again.
    if (!discarded().scheduled && Py_IsInitialized())
        discarded().scheduled = Py_AddPendingCall(&drop_discarded, nullptr) == 0;
}

void hold(py_chunk& c)
{
    drop_discarded(); // a discarded chunk may be given again
    if (!c.data || !c.present)
        throw py::value_error("chunk: data and present must both be set; give "
                              "Chunk(data=..., present=...) numpy arrays");
    if (!held().emplace(&c, py::cast(&c, py::return_value_policy::reference)).second)
        throw py::value_error("chunk: already in a ringbuffer or stream; give each "
                              "Chunk once, and take it out again before reusing it");
}

py::object release(recv::stream_chunk* c)
{
    auto it = held().find(c);
    if (it == held().end())
        throw std::logic_error("a chunk came out of a ring that was not put in");
    py::object obj = std::move(it->second);
    held().erase(it);
    return obj;
}

/*! A ring whose chunks' references die with it. */
ring_ptr make_ring(std::size_t maxsize)
{
    auto ring = std::make_shared<recv::chunk_ringbuffer>(maxsize);
    ring->set_discard(&discard_chunk);
    return ring;
}

/*! Waits on \p op (GIL released) in slices short enough for Ctrl-C. */
template <typename Op>
recv::chunk_ringbuffer::result waiting(Op&& op)
{
    for (;;) {
        recv::chunk_ringbuffer::result r;
        {
            py::gil_scoped_release release;
            r = op(std::chrono::microseconds(100000));
        }
        if (r != recv::chunk_ringbuffer::result::timeout)
            return r;
        if (PyErr_CheckSignals() != 0)
            throw py::error_already_set();
    }
}

py::object ring_get(recv::chunk_ringbuffer& ring)
{
    recv::stream_chunk* c = nullptr;
    if (waiting([&](auto t) { return ring.pop(c, t); }) !=
        recv::chunk_ringbuffer::result::ok)
        throw stopped("the ringbuffer has stopped");
    return release(c);
}

py::object ring_get_nowait(recv::chunk_ringbuffer& ring)
{
    recv::stream_chunk* c = nullptr;
    switch (ring.try_pop(c)) {
    case recv::chunk_ringbuffer::result::ok:
        return release(c);
    case recv::chunk_ringbuffer::result::stopped:
        throw stopped("the ringbuffer has stopped");
    default:
        throw empty("no chunk is ready");
    }
}

void ring_put(recv::chunk_ringbuffer& ring, py_chunk& c, bool wait)
{
    hold(c);
    const auto r =
        wait ? waiting([&](auto t) { return ring.push(&c, t); }) : ring.try_push(&c);
    if (r == recv::chunk_ringbuffer::result::ok)
        return;
    release(&c);
    if (r == recv::chunk_ringbuffer::result::stopped)
        throw stopped("the ringbuffer has stopped");
    throw full("the ringbuffer is full");
}

/*! spead2's callback_from_python: a tuple (a scipy.LowLevelCallable is one) whose
 * first element is a capsule named by the C signature. */
py_placement callback_placement(const py::object& obj)
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
    py_placement out;
    out.keep_alive = obj;
    if (signature == "void (void *, size_t)")
        out.policy = recv::make_callback_placement(
            reinterpret_cast<recv::chunk_place_c_function_no_data>(pointer));
    else if (signature == "void (void *, size_t, void *)")
        out.policy = recv::make_callback_placement(
            reinterpret_cast<recv::chunk_place_c_function>(pointer),
            PyCapsule_GetContext(capsule.ptr()));
    else
        throw py::value_error("place: the callback's signature is '" + signature +
                              "'; give 'void (void *, size_t)' or 'void (void *, "
                              "size_t, void *)'");
    return out;
}

/*! A chunk_ring_stream with the readers recv.Stream offers. */
class py_chunk_stream
{
public:
    py_chunk_stream(std::shared_ptr<thread_pool> pool,
                    const recv::stream_config& config,
                    const recv::chunk_stream_config& chunk_config,
                    ring_ptr data_ring,
                    ring_ptr free_ring,
                    std::uintptr_t stream_id)
        : d_pool(std::move(pool)),
          d_stream(std::make_unique<recv::chunk_ring_stream>(config,
                                                             chunk_config,
                                                             std::move(data_ring),
                                                             std::move(free_ring),
                                                             stream_id))
    {
    }
    ~py_chunk_stream()
    {
        py::gil_scoped_release release;
        d_stream.reset();
    }

    recv::chunk_ring_stream& stream() { return *d_stream; }

    void add_free_chunk(py_chunk& c) { add_free(*d_stream->free_ringbuffer(), c); }

    void stop()
    {
        py::gil_scoped_release release;
        d_stream->stop();
    }

private:
    std::shared_ptr<thread_pool> d_pool;
    std::unique_ptr<recv::chunk_ring_stream> d_stream;
};

recv::stream_config make_stream_config(std::size_t max_heaps,
                                       std::size_t max_heap_size,
                                       bool stop_on_stop_item)
{
    recv::stream_config config;
    config.set_max_heaps(max_heaps);
    config.set_max_heap_size(max_heap_size);
    config.set_stop_on_stop_heap(stop_on_stop_item);
    return config;
}

recv::chunk_stream_config
make_chunk_config(const std::vector<std::uint64_t>& items,
                  std::size_t max_chunks,
                  std::size_t max_heap_extra,
                  std::size_t packet_presence,
                  const py_placement& place,
                  const std::vector<std::pair<std::string, bool>>& stats)
{
    recv::chunk_stream_config chunk;
    chunk.set_items(items);
    chunk.set_max_chunks(max_chunks);
    chunk.set_max_heap_extra(max_heap_extra);
    if (packet_presence)
        chunk.enable_packet_presence(packet_presence);
    chunk.set_place(place.policy);
    for (const auto& s : stats)
        chunk.add_stat(s.first,
                       s.second ? recv::stat_mode::maximum : recv::stat_mode::counter);
    return chunk;
}

} // namespace

/*! The readers recv.Stream has, on any stream (recv/__init__.py parses the forms). */
py::list add_udp_reader(recv::stream& stream,
                        const std::string& endpoints,
                        const std::string& interface,
                        std::size_t max_size,
                        std::size_t buffer_size)
{
    recv::udp_config config;
    config.set_endpoints(endpoints);
    config.set_interface(interface);
    config.set_max_size(max_size);
    config.set_buffer_size(buffer_size);
    py::list bound;
    translating_os_errors([&] {
        auto& reader = stream.emplace_reader<recv::udp_reader>(config);
        for (const auto& ep : reader.get_bound_endpoints())
            bound.append(py::make_tuple(ep.address().to_string(), ep.port()));
        return 0;
    });
    return bound;
}

void add_udp_ibv_reader(recv::stream& stream,
                        const std::string& endpoints,
                        const std::string& interface,
                        std::size_t max_size,
                        std::size_t buffer_size,
                        int comp_vector,
                        int max_poll)
{
    recv::udp_ibv_config config;
    config.set_endpoints(endpoints);
    config.set_interface(interface);
    config.set_max_size(max_size);
    config.set_buffer_size(buffer_size);
    config.set_comp_vector(comp_vector);
    config.set_max_poll(max_poll);
    translating_os_errors([&] {
        py::gil_scoped_release release;
        stream.emplace_reader<recv::udp_ibv_reader>(config);
        return 0;
    });
}

/*! spead2's add_free_chunk: present cleared, into \p ring (dropped silently once it
 * stopped). */
void add_free(recv::chunk_ringbuffer& ring, py_chunk& c)
{
    if (c.present && c.present_size)
        std::memset(c.present, 0, c.present_size);
    hold(c);
    const auto r = ring.try_push(&c);
    if (r == recv::chunk_ringbuffer::result::ok)
        return;
    release(&c);
    if (r == recv::chunk_ringbuffer::result::timeout)
        throw full("add_free_chunk: the free ringbuffer is full; give it a larger "
                   "maxsize");
}

void bind_api_recv_chunk(py::module& parent)
{
    auto m = parent.def_submodule("_recv_chunk", "spead2's chunk stream API (C++ side)");
    m.attr("DEFAULT_MAX_CHUNKS") = recv::chunk_stream_config::default_max_chunks;
    m.attr("FIRST_CUSTOM_STAT") = recv::chunk_stream_config::first_custom_stat;
    py::list names;
    for (const auto& kv : recv_stats().items())
        names.append(kv.first);
    m.attr("STAT_NAMES") = names;

    py::class_<py_chunk>(m, "Chunk", "A chunk of a chunk stream, in buffers you give.")
        .def(py::init([](std::int64_t chunk_id,
                         std::uintptr_t stream_id,
                         const py::object& data,
                         const py::object& present,
                         const py::object& extra) {
                 auto c = std::make_unique<py_chunk>();
                 c->chunk_id = chunk_id;
                 c->stream_id = stream_id;
                 py_chunk::attach(c->data_obj, c->data, c->data_size, data, "data");
                 py_chunk::attach(
                     c->present_obj, c->present, c->present_size, present, "present");
                 py_chunk::attach(c->extra_obj, c->extra, c->extra_size, extra, "extra");
                 return c;
             }),
             py::kw_only(),
             py::arg("chunk_id") = -1,
             py::arg("stream_id") = 0,
             py::arg("data") = py::none(),
             py::arg("present") = py::none(),
             py::arg("extra") = py::none())
        .def_readwrite("chunk_id", &py_chunk::chunk_id)
        .def_readwrite("stream_id", &py_chunk::stream_id)
        .def_property(
            "data",
            [](const py_chunk& c) { return c.data_obj; },
            [](py_chunk& c, const py::object& o) {
                py_chunk::attach(c.data_obj, c.data, c.data_size, o, "data");
            })
        .def_property(
            "present",
            [](const py_chunk& c) { return c.present_obj; },
            [](py_chunk& c, const py::object& o) {
                py_chunk::attach(c.present_obj, c.present, c.present_size, o, "present");
            })
        .def_property(
            "extra",
            [](const py_chunk& c) { return c.extra_obj; },
            [](py_chunk& c, const py::object& o) {
                py_chunk::attach(c.extra_obj, c.extra, c.extra_size, o, "extra");
            });

    py::class_<recv::chunk_ringbuffer, ring_ptr>(m, "ChunkRingbuffer")
        .def(py::init(&make_ring), py::arg("maxsize"))
        .def("qsize", &recv::chunk_ringbuffer::size)
        .def_property_readonly("maxsize", &recv::chunk_ringbuffer::capacity)
        .def_property_readonly("data_fd",
                               [](recv::chunk_ringbuffer& r) {
                                   return translating_os_errors(
                                       [&] { return r.data_fd(); });
                               })
        .def_property_readonly("space_fd",
                               [](recv::chunk_ringbuffer& r) {
                                   return translating_os_errors(
                                       [&] { return r.space_fd(); });
                               })
        .def("get", &ring_get)
        .def("get_nowait", &ring_get_nowait)
        .def(
            "put",
            [](recv::chunk_ringbuffer& r, py_chunk& c) { ring_put(r, c, true); },
            py::arg("chunk"))
        .def(
            "put_nowait",
            [](recv::chunk_ringbuffer& r, py_chunk& c) { ring_put(r, c, false); },
            py::arg("chunk"))
        .def("empty", [](const recv::chunk_ringbuffer& r) { return r.size() == 0; })
        .def("full",
             [](const recv::chunk_ringbuffer& r) { return r.size() == r.capacity(); })
        .def("stop", &recv::chunk_ringbuffer::stop)
        .def("add_producer", &recv::chunk_ringbuffer::add_producer)
        .def("remove_producer", &recv::chunk_ringbuffer::remove_producer)
        .def("__iter__", [](py::object self) { return self; })
        .def("__next__", [](recv::chunk_ringbuffer& r) {
            try {
                return ring_get(r);
            } catch (const stopped&) {
                throw py::stop_iteration();
            }
        });

    py::class_<py_placement>(m, "_Placement");
    m.def("_callback_placement", &callback_placement, py::arg("place"));
    // spead.source(substream_ids="8-11"): the text spead_recv --substream-ids takes.
    m.def("_parse_substream_ids", &substream_set::parse, py::arg("text"));
    m.def("_declarative_placement",
          [](std::uint64_t timestamp_item,
             std::uint64_t timestamp_step,
             std::size_t heap_bytes,
             std::size_t heaps_per_chunk,
             std::uint64_t substream_item,
             std::size_t substreams,
             std::uint64_t first_substream,
             const std::vector<std::uint64_t>& substream_ids) {
              recv::declarative_placement_config c;
              c.timestamp_item = timestamp_item;
              c.timestamp_step = timestamp_step;
              c.heap_bytes = heap_bytes;
              c.heaps_per_chunk = heaps_per_chunk;
              c.substream_item = substream_item;
              c.substreams = substreams;
              c.first_substream = first_substream;
              c.substream_ids = substream_ids;
              c.validate();
              return py_placement{ recv::make_declarative_placement(c) };
          });

    py::class_<chunk_stream_arguments>(m, "_ChunkStreamArguments")
        .def(py::init([](std::shared_ptr<thread_pool> pool,
                         std::size_t max_heaps,
                         std::size_t max_heap_size,
                         bool stop_on_stop_item,
                         std::uintptr_t stream_id,
                         const std::vector<std::uint64_t>& items,
                         std::size_t max_chunks,
                         std::size_t max_heap_extra,
                         std::size_t packet_presence,
                         const py_placement& place,
                         const std::vector<std::pair<std::string, bool>>& stats) {
            if (!pool)
                throw std::invalid_argument(
                    "thread_pool: None; give a spead.ThreadPool()");
            return chunk_stream_arguments{
                std::move(pool),
                make_stream_config(max_heaps, max_heap_size, stop_on_stop_item),
                make_chunk_config(
                    items, max_chunks, max_heap_extra, packet_presence, place, stats),
                stream_id
            };
        }));

    py::class_<py_chunk_stream> stream_cls(m, "_ChunkRingStream");
    bind_stream_face<py_chunk_stream>(stream_cls);
    stream_cls
        .def(py::init([](const chunk_stream_arguments& args,
                         ring_ptr data_ring,
                         ring_ptr free_ring) {
            return std::make_unique<py_chunk_stream>(args.pool,
                                                     args.config,
                                                     args.chunk,
                                                     std::move(data_ring),
                                                     std::move(free_ring),
                                                     args.stream_id);
        }))
        .def("add_free_chunk", &py_chunk_stream::add_free_chunk, py::arg("chunk"))
        .def("stop", &py_chunk_stream::stop)
        .def_property_readonly(
            "data_ringbuffer",
            [](py_chunk_stream& s) { return s.stream().data_ringbuffer(); })
        .def_property_readonly("free_ringbuffer", [](py_chunk_stream& s) {
            return s.stream().free_ringbuffer();
        });

    bind_api_recv_chunk_group(m);
}

} // namespace python
} // namespace spead
} // namespace gr
