/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* spead2's chunk stream groups (gnuradio.spead._recv_chunk): ChunkStreamGroupConfig,
 * and the group and members python/spead/recv/_chunk.py builds
 * ChunkStreamRingGroup and ChunkStreamGroupMember on. */

#include "api_metrics.h"
#include "api_recv_chunk.h"
#include "api_recv_readers.h"

#include <gnuradio/spead/recv_chunk_stream_group.h>

namespace gr {
namespace spead {
namespace python {

namespace {

/*! A chunk_stream_ring_group and the thread pools its members were given. */
class py_group
{
public:
    py_group(const recv::chunk_stream_group_config& config,
             ring_ptr data_ring,
             ring_ptr free_ring)
        : d_group(std::make_unique<recv::chunk_stream_ring_group>(
              config, std::move(data_ring), std::move(free_ring)))
    {
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

/*! One member of a py_group (which the Python object keeps alive): made by emplacing
 * a stream into the group. */
class py_group_member
{
public:
    py_group_member(py_group& group,
                    std::shared_ptr<thread_pool> pool,
                    const py_recv_config& config,
                    const py_chunk_stream_config& chunk_config)
        : d_group(group), d_config(config), d_chunk_config(chunk_config)
    {
        if (!pool)
            throw std::invalid_argument("thread_pool: None; give a spead.ThreadPool()");
        d_member = &group.group().emplace_back(
            config.config, chunk_config_of(config, chunk_config), config.stream_id);
        group.keep(std::move(pool));
        d_metrics = expose_stream(config.metrics, *d_member);
    }

    recv::chunk_stream_group_member& stream() { return *d_member; }
    counters custom_stats() const { return d_member->get_custom_stats(); }
    const py_recv_config& config() const { return d_config; }
    /*! As spead2's: a member's stop() stops the whole group. */
    void stop() { d_group.stop(); }

private:
    py_group& d_group;
    recv::chunk_stream_group_member* d_member;
    py_recv_config d_config;
    py_chunk_stream_config d_chunk_config; // keeps the placement's object alive
    metrics::registration d_metrics;       // goes first, while the member is there
};

} // namespace

void bind_chunk_groups(py::module& m)
{
    using G = recv::chunk_stream_group_config;
    py::class_<G> config(m,
                         "ChunkStreamGroupConfig",
                         "Settings of a group (as spead2.recv.ChunkStreamGroupConfig): "
                         "max_chunks live at once, and what a member needing a chunk "
                         "beyond them does (EvictionMode.LOSSY: the lagging members let "
                         "go of the oldest; LOSSLESS: it waits for them).");
    py::enum_<G::eviction_mode>(config, "EvictionMode")
        .value("LOSSY", G::eviction_mode::lossy)
        .value("LOSSLESS", G::eviction_mode::lossless);
    def_field(config, "max_chunks", &G::get_max_chunks, &G::set_max_chunks);
    def_field(config, "eviction_mode", &G::get_eviction_mode, &G::set_eviction_mode);
    def_keyword_config(config).attr("DEFAULT_MAX_CHUNKS") = G::default_max_chunks;

    py::class_<py_group>(m, "_ChunkStreamRingGroup")
        .def(py::init<const G&, ring_ptr, ring_ptr>(),
             py::arg("config"),
             py::arg("data_ringbuffer"),
             py::arg("free_ringbuffer"))
        .def(
            "add_free_chunk",
            [](py_group& g, py_chunk& c) { add_free(*g.group().free_ringbuffer(), c); },
            py::arg("chunk"))
        .def("stop", &py_group::stop)
        .def_property_readonly("data_ringbuffer",
                               [](py_group& g) { return g.group().data_ringbuffer(); })
        .def_property_readonly("free_ringbuffer",
                               [](py_group& g) { return g.group().free_ringbuffer(); });

    py::class_<py_group_member> member(m, "_ChunkStreamGroupMember");
    bind_stream_face<py_group_member>(member);
    member
        .def(py::init<py_group&,
                      std::shared_ptr<thread_pool>,
                      const py_recv_config&,
                      const py_chunk_stream_config&>(),
             py::arg("group"),
             py::arg("thread_pool"),
             py::arg("config"),
             py::arg("chunk_stream_config"),
             py::keep_alive<1, 2>())
        .def_property_readonly("config", &py_group_member::config)
        .def("stop", &py_group_member::stop);
}

} // namespace python
} // namespace spead
} // namespace gr
