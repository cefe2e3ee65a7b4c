/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PYTHON_API_RECV_READERS_H
#define INCLUDED_SPEAD_PYTHON_API_RECV_READERS_H

/* What every receive stream kind offers Python (recv.Stream, ChunkRingStream, a
 * chunk stream group's member): readers added from the bound link configs, and the
 * counters. python/spead/recv/_stream_face.py builds spead2's call forms on them. */

#include "api_link_configs.h"

#include <gnuradio/spead/inproc_queue.h>
#include <memory>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace python {

/*! Adds a reader of \p config's kind to \p stream (the GIL released while it starts):
 * the (address, port) pairs it listens on, or none (ibverbs, rdma).
 * \throws std::invalid_argument (ValueError) for a bad config, OSError when the
 * socket or device refuses */
py::list add_reader(recv::stream& stream, const recv::udp_config& config);
py::list add_reader(recv::stream& stream, const py_recv_udp_ibv& config);
py::list add_reader(recv::stream& stream, const recv::tcp_config& config);
py::list add_reader(recv::stream& stream, const recv::rdma_config& config);
/*! Readers on a duplicate of the caller's socket: a bound UDP one, or a listening
 * TCP one (spead2's socket and acceptor forms). */
py::list add_reader(recv::stream& stream, int socket, const recv::udp_config& config);
py::list add_reader(recv::stream& stream, int acceptor, const recv::tcp_config& config);
/*! Reads the packets \p queue's senders put in it (InprocQueue). */
void add_inproc_reader(recv::stream& stream, const std::shared_ptr<inproc_queue>& queue);
/*! Reads the packets back to back in \p buffer (any C-contiguous Python buffer),
 * which the reader holds until it is destroyed. */
void add_buffer_reader(recv::stream& stream, const py::object& buffer);
/*! Replays the UDP payloads to \p port (0: all) of a capture file. */
void add_pcap_reader(recv::stream& stream,
                     const std::string& filename,
                     std::uint16_t port);

using counters = std::vector<std::pair<std::string, std::uint64_t>>;
/*! Every counter of \p stream, then \p custom (a chunk stream's own). */
counters stream_counters(const recv::stream& stream, const counters& custom);

template <typename Self, typename Config, typename Cls>
void def_add_reader(Cls& cls)
{
    cls.def(
        "_add_reader",
        [](Self& self, const Config& config) {
            return add_reader(self.stream(), config);
        },
        py::arg("config"));
}

/*! _add_socket_reader(socket, config): a reader of \p Config's kind on the caller's
 * socket (a file descriptor, duplicated). */
template <typename Self, typename Config, typename Cls>
void def_add_socket_reader(Cls& cls)
{
    cls.def(
        "_add_socket_reader",
        [](Self& self, int socket, const Config& config) {
            return add_reader(self.stream(), socket, config);
        },
        py::arg("socket"),
        py::arg("config"));
}

/*! Binds the readers and counters of \p Self, which has stream() and custom_stats(). */
template <typename Self, typename Cls>
void bind_stream_face(Cls& cls)
{
    def_add_reader<Self, recv::udp_config>(cls);
    def_add_reader<Self, py_recv_udp_ibv>(cls);
    def_add_reader<Self, recv::tcp_config>(cls);
    def_add_reader<Self, recv::rdma_config>(cls);
    def_add_socket_reader<Self, recv::udp_config>(cls);
    def_add_socket_reader<Self, recv::tcp_config>(cls);
    cls.def("_add_pcap_reader",
            [](Self& self, const std::string& filename, std::uint16_t port) {
                add_pcap_reader(self.stream(), filename, port);
            })
        .def("_start",
             [](Self& self) {
                 py::gil_scoped_release release;
                 self.stream().start();
             })
        .def("_add_inproc_reader",
             [](Self& self, const std::shared_ptr<inproc_queue>& queue) {
                 add_inproc_reader(self.stream(), queue);
             })
        .def("_add_buffer_reader",
             [](Self& self, const py::object& buffer) {
                 add_buffer_reader(self.stream(), buffer);
             })
        .def("_stats",
             [](Self& self) {
                 return stream_counters(self.stream(), self.custom_stats());
             })
        .def("_failure", [](Self& self) { return self.stream().get_failure(); });
}

} // namespace python
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PYTHON_API_RECV_READERS_H */
