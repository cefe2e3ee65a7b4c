/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The readers of every receive stream kind, from the bound link configs
 * (api_recv_readers.h). */

#include "api_recv_readers.h"

#include <gnuradio/spead/recv_buffer.h>
#include <gnuradio/spead/recv_inproc.h>
#include <gnuradio/spead/recv_pcap.h>

namespace gr {
namespace spead {
namespace python {

namespace {

/*! Starts a Reader on \p stream, the GIL released (a reader's thread never takes it);
 * a socket or device refusing is an OSError with its errno. */
template <typename Reader, typename... Args>
Reader& emplace(recv::stream& stream, const Args&... args)
{
    return *translating_os_errors([&] {
        py::gil_scoped_release release;
        return &stream.emplace_reader<Reader>(args...);
    });
}

} // namespace

py::list add_reader(recv::stream& stream, const recv::udp_config& config)
{
    return endpoint_list(emplace<recv::udp_reader>(stream, config).get_bound_endpoints());
}

py::list add_reader(recv::stream& stream, const py_recv_udp_ibv& config)
{
    emplace<recv::udp_ibv_reader>(stream, config.resolved());
    return py::list();
}

py::list add_reader(recv::stream& stream, const recv::tcp_config& config)
{
    const auto bound = emplace<recv::tcp_reader>(stream, config).get_bound_endpoint();
    return endpoint_list(std::vector<std::decay_t<decltype(bound)>>{ bound });
}

py::list add_reader(recv::stream& stream, int socket, const recv::udp_config& config)
{
    return endpoint_list(
        emplace<recv::udp_reader>(stream, socket, config).get_bound_endpoints());
}

py::list add_reader(recv::stream& stream, int acceptor, const recv::tcp_config& config)
{
    const auto bound =
        emplace<recv::tcp_reader>(stream, acceptor, config).get_bound_endpoint();
    return endpoint_list(std::vector<std::decay_t<decltype(bound)>>{ bound });
}

py::list add_reader(recv::stream& stream, const recv::rdma_config& config)
{
    emplace<recv::rdma_reader>(stream, config);
    return py::list();
}

void add_inproc_reader(recv::stream& stream, const std::shared_ptr<inproc_queue>& queue)
{
    py::gil_scoped_release release;
    stream.emplace_reader<recv::inproc_reader>(queue);
}

namespace {
/*! A Python buffer held by a reader: let go with the GIL, whichever thread the
 * stream destroys its readers on. */
struct held_buffer {
    std::unique_ptr<py::buffer_info> info;
    ~held_buffer()
    {
        py::gil_scoped_acquire gil;
        info.reset();
    }
};
} // namespace

void add_buffer_reader(recv::stream& stream, const py::object& buffer)
{
    auto held = std::make_shared<held_buffer>();
    held->info = contiguous_buffer(buffer, "buffer");
    const auto* data = static_cast<const std::uint8_t*>(held->info->ptr);
    const auto size = std::size_t(held->info->size * held->info->itemsize);
    py::gil_scoped_release release;
    stream.emplace_reader<recv::buffer_reader>(data, size, std::move(held));
}

void add_pcap_reader(recv::stream& stream,
                     const std::string& filename,
                     std::uint16_t port)
{
    py::gil_scoped_release release;
    stream.emplace_reader<recv::pcap_reader>(filename, port);
}

counters stream_counters(const recv::stream& stream, const counters& custom)
{
    counters out;
    {
        py::gil_scoped_release release; // a reader may hold the stream's lock
        out = stream.get_stats().items();
    }
    out.insert(out.end(), custom.begin(), custom.end());
    return out;
}

} // namespace python
} // namespace spead
} // namespace gr
