/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* spead2's chunk stream groups (gnuradio.spead._recv_chunk._ChunkStreamRingGroup):
 * python/spead/recv/_chunk_group.py builds ChunkStreamRingGroup on them. */

#include "api_recv_chunk.h"

#include <gnuradio/spead/recv_chunk_stream_group.h>

namespace gr {
namespace spead {
namespace python {

namespace {

/*! A chunk_stream_ring_group and the thread pools its members were given. */
class py_group
{
public:
    py_group(std::size_t max_chunks,
             bool lossless,
             ring_ptr data_ring,
             ring_ptr free_ring)
    {
        recv::chunk_stream_group_config config;
        config.set_max_chunks(max_chunks);
        config.set_eviction_mode(
            lossless ? recv::chunk_stream_group_config::eviction_mode::lossless
                     : recv::chunk_stream_group_config::eviction_mode::lossy);
        d_group = std::make_unique<recv::chunk_stream_ring_group>(
            config, std::move(data_ring), std::move(free_ring));
    }
    ~py_group()
    {
        py::gil_scoped_release release;
        d_group.reset();
    }
    recv::chunk_stream_ring_group& group() { return *d_group; }
    void keep(std::shared_ptr<thread_pool> pool) { d_pools.push_back(std::move(pool)); }
    void stop()
    {
        py::gil_scoped_release release;
        d_group->stop();
    }

private:
    std::vector<std::shared_ptr<thread_pool>> d_pools;
    std::unique_ptr<recv::chunk_stream_ring_group> d_group;
};

/*! One member of a py_group (which the Python object keeps alive). */
struct py_group_member {
    recv::chunk_stream_group_member* member;
    recv::chunk_stream_group_member& stream() { return *member; }
};


} // namespace

void bind_api_recv_chunk_group(py::module& m)
{
    py::class_<py_group_member> member_cls(m, "_ChunkStreamGroupMember");
    bind_stream_face<py_group_member>(member_cls);

    py::class_<py_group>(m, "_ChunkStreamRingGroup")
        .def(py::init<std::size_t, bool, ring_ptr, ring_ptr>())
        .def(
            "_emplace_back",
            [](py_group& g, const chunk_stream_arguments& args) {
                g.keep(args.pool);
                return py_group_member{ &g.group().emplace_back(
                    args.config, args.chunk, args.stream_id) };
            },
            py::keep_alive<0, 1>())
        .def(
            "add_free_chunk",
            [](py_group& g, py_chunk& c) { add_free(*g.group().free_ringbuffer(), c); },
            py::arg("chunk"))
        .def("stop", &py_group::stop)
        .def_property_readonly("data_ringbuffer",
                               [](py_group& g) { return g.group().data_ringbuffer(); })
        .def_property_readonly("free_ringbuffer",
                               [](py_group& g) { return g.group().free_ringbuffer(); });
}

} // namespace python
} // namespace spead
} // namespace gr
