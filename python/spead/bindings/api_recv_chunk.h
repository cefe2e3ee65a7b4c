/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* What the chunk stream bindings share (gnuradio.spead._recv_chunk): Chunk over
 * buffers Python gives, the rings' hand-over of them (api_recv_chunk.cc), and
 * ChunkStreamConfig (api_recv_chunk_stream.cc), which ring streams and group members
 * are made from. */

#ifndef INCLUDED_SPEAD_PYTHON_API_RECV_CHUNK_H
#define INCLUDED_SPEAD_PYTHON_API_RECV_CHUNK_H

#include "api_configs.h"

#include <gnuradio/spead/recv_chunk_stream.h>
#include <memory>
#include <string>

namespace gr {
namespace spead {
namespace python {

/*! A Chunk: its buffers are the Python objects given (numpy arrays...). */
class py_chunk : public recv::stream_chunk
{
public:
    py::object data_obj = py::none(), present_obj = py::none(), extra_obj = py::none();

    /*! Points \p ptr / \p size at \p obj's writable contiguous memory. */
    static void attach(py::object& slot,
                       std::uint8_t*& ptr,
                       std::size_t& size,
                       const py::object& obj,
                       const char* name)
    {
        if (obj.is_none()) {
            slot = py::none();
            ptr = nullptr;
            size = 0;
            return;
        }
        Py_buffer view;
        if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) !=
            0) {
            PyErr_Clear();
            throw py::value_error(std::string(name) +
                                  ": not a writable contiguous buffer; give a numpy "
                                  "array (e.g. np.zeros(n, np.uint8))");
        }
        ptr = static_cast<std::uint8_t*>(view.buf);
        size = std::size_t(view.len);
        PyBuffer_Release(&view); // the object itself keeps the memory alive
        slot = obj;
    }
};

using ring_ptr = std::shared_ptr<recv::chunk_ringbuffer>;

/*! Chunk and ChunkRingbuffer (api_recv_chunk.cc). */
void bind_chunks(py::module& m);
/*! ChunkStreamConfig, ChunkPlacement and ChunkRingStream (api_recv_chunk_stream.cc). */
void bind_chunk_streams(py::module& m);
/*! ChunkStreamGroupConfig and the groups' C++ side (api_recv_chunk_group.cc). */
void bind_chunk_groups(py::module& m);

/*! spead2's add_free_chunk: present cleared, into \p ring (dropped silently once it
 * stopped). */
void add_free(recv::chunk_ringbuffer& ring, py_chunk& c);

/*! recv.ChunkStreamConfig: recv::chunk_stream_config and the placement object as
 * given (a scipy.LowLevelCallable, which keeps its C function alive, or a
 * ChunkPlacement). */
struct py_chunk_stream_config {
    recv::chunk_stream_config config;
    py::object place = py::none();
};

/*! The chunk config a stream is made with: \p chunk's, with the statistics
 * \p config.add_stat() declared. */
recv::chunk_stream_config chunk_config_of(const py_recv_config& config,
                                          const py_chunk_stream_config& chunk);

} // namespace python
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PYTHON_API_RECV_CHUNK_H */
