/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The chunks of spead2's chunk stream API (gnuradio.spead._recv_chunk): Chunk over
 * buffers the user gives, kept alive while C++ holds their pointers, and
 * ChunkRingbuffer, which hands them between Python and the streams. */

#include "api_recv_chunk.h"

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

} // namespace

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

void bind_chunks(py::module& m)
{
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
}

void bind_api_recv_chunk(py::module& parent)
{
    auto m = parent.def_submodule("_recv_chunk", "spead2's chunk stream API (C++ side)");
    // spead.source(substream_ids="8-11"): the text spead_recv --substream-ids takes.
    m.def("_parse_substream_ids", &substream_set::parse, py::arg("text"));
    bind_chunks(m);
    bind_chunk_streams(m);
    bind_chunk_groups(m);
}

} // namespace python
} // namespace spead
} // namespace gr
