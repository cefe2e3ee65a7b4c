/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* What the chunk stream bindings share: Chunk, the placement holder, the stream face
 * (readers, stats) and the arguments every chunk stream kind takes. */

#ifndef INCLUDED_SPEAD_PYTHON_API_RECV_CHUNK_H
#define INCLUDED_SPEAD_PYTHON_API_RECV_CHUNK_H

#include "api_common.h"

#include <pybind11/stl.h>

#include <gnuradio/spead/recv_chunk_stream.h>
#include <gnuradio/spead/recv_pcap.h>
#include <string>
#include <utility>
#include <vector>

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

/*! A placement policy and the Python object its C function lives in. */
struct py_placement {
    std::shared_ptr<recv::chunk_placement_policy> policy;
    py::object keep_alive = py::none();
};


py::list add_udp_reader(recv::stream& stream,
                        const std::string& endpoints,
                        const std::string& interface,
                        std::size_t max_size,
                        std::size_t buffer_size);
void add_udp_ibv_reader(recv::stream& stream,
                        const std::string& endpoints,
                        const std::string& interface,
                        std::size_t max_size,
                        std::size_t buffer_size,
                        int comp_vector,
                        int max_poll);
/*! spead2's add_free_chunk: present cleared, into \p ring (dropped silently once it
 * stopped). */
void add_free(recv::chunk_ringbuffer& ring, py_chunk& c);
/*! What every chunk stream kind (ring stream, group member) is made from: Python's
 * _ChunkStreamArguments, which recv/_chunk.py's _stream_arguments() builds once. */
struct chunk_stream_arguments {
    std::shared_ptr<thread_pool> pool;
    recv::stream_config config;
    recv::chunk_stream_config chunk;
    std::uintptr_t stream_id = 0;
};

/*! Binds the readers and stats of \p Self (which has stream() and custom_stats()). */
template <typename Self, typename Cls>
void bind_stream_face(Cls& cls)
{
    cls.def("_add_udp_reader",
            [](Self& self,
               const std::string& endpoints,
               const std::string& interface,
               std::size_t max_size,
               std::size_t buffer_size) {
                return add_udp_reader(
                    self.stream(), endpoints, interface, max_size, buffer_size);
            })
        .def("_add_udp_ibv_reader",
             [](Self& self,
                const std::string& endpoints,
                const std::string& interface,
                std::size_t max_size,
                std::size_t buffer_size,
                int comp_vector,
                int max_poll) {
                 add_udp_ibv_reader(self.stream(),
                                    endpoints,
                                    interface,
                                    max_size,
                                    buffer_size,
                                    comp_vector,
                                    max_poll);
             })
        .def("_add_pcap_reader",
             [](Self& self, const std::string& filename, std::uint16_t port) {
                 self.stream().template emplace_reader<recv::pcap_reader>(filename, port);
             })
        .def("_stats",
             [](Self& self) {
                 std::vector<std::pair<std::string, std::uint64_t>> out;
                 {
                     py::gil_scoped_release release; // a reader may hold the lock
                     out = self.stream().get_stats().items();
                 }
                 for (auto& kv : self.stream().get_custom_stats())
                     out.push_back(kv);
                 return out;
             })
        .def("_failure", [](Self& self) { return self.stream().get_failure(); });
}


/*! ChunkStreamRingGroup's C++ side (api_recv_chunk_group.cc). */
void bind_api_recv_chunk_group(py::module& m);

} // namespace python
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PYTHON_API_RECV_CHUNK_H */
