/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The spead2-compatible Python API, send side (gnuradio.spead._send): heaps that
 * borrow their items' memory through the buffer protocol, and the stream
 * gnuradio.spead.send builds spead2's overloads on, made from a bound link config of
 * any kind (udp, ibverbs, tcp, rdma; api_send_config.cc). */

#include "api_link_configs.h"
#include "api_metrics.h"

#include "protocol/packetiser.h"
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_inproc.h>
#include <gnuradio/spead/send_rdma.h>
#include <gnuradio/spead/send_stream.h>
#include <gnuradio/spead/send_streambuf.h>
#include <gnuradio/spead/send_tcp.h>
#include <gnuradio/spead/send_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <condition_variable>
#include <unistd.h>
#include <boost/system/system_error.hpp>
#include <deque>
#include <mutex>
#include <sstream>
#include <tuple>

namespace gr {
namespace spead {
namespace python {

namespace {

/*! spead2.send.Heap: a send::heap and the Python memory its items point into. */
struct py_send_heap {
    explicit py_send_heap(const py_flavour& f) : heap(f.value), flavour(f) {}

    send::heap heap;
    py_flavour flavour;
    std::vector<std::unique_ptr<py::buffer_info>> buffers;
    bool repeat_pointers = false;

    void add_item(const py::object& item)
    {
        const auto id = item.attr("id").cast<std::uint64_t>();
        const bool allow_immediate = item.attr("allow_immediate")().cast<bool>();
        py::object value = item.attr("to_buffer")();
        auto info = contiguous_buffer(value, "item value");
        heap.add_item(
            id, info->ptr, std::size_t(info->size * info->itemsize), allow_immediate);
        buffers.push_back(std::move(info));
    }

    void add_descriptor(const py::object& d)
    {
        py::object raw = d.attr("to_raw")(py::cast(flavour));
        heap.add_descriptor(raw.cast<const descriptor&>());
    }
};

using heap_ptr = std::shared_ptr<py_send_heap>;

/*! spead2.send.PacketGenerator: a heap's packets as bytes, cut as a stream cuts them
 * (the heap, and the memory its items point into, stay alive meanwhile). */
struct py_packet_generator {
    py_packet_generator(heap_ptr h, std::uint64_t cnt, std::size_t max_packet_size)
        : heap(std::move(h)),
          generator(heap->heap, cnt, max_packet_size),
          scratch(max_packet_size)
    {
    }

    py::bytes next()
    {
        if (!generator.has_next())
            throw py::stop_iteration();
        pieces.clear();
        generator.next(scratch.data(), pieces);
        std::string packet;
        for (const auto& piece : pieces)
            packet.append(reinterpret_cast<const char*>(piece.data), piece.length);
        return py::bytes(packet);
    }

    heap_ptr heap; // first: the generator refers to it
    send::packet_generator generator;
    std::vector<std::uint8_t> scratch;
    std::vector<send::packet_piece> pieces;
};

/*! A finished asynchronous send, waiting for the event loop to collect it. */
/*! One send's completion, waited for (the GIL released by the caller). */
struct awaited_completion {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    std::size_t bytes = 0;
    boost::system::error_code ec;

    /*! The handler that records into \p self (which it keeps alive). */
    static send::stream::completion_handler
    handler(const std::shared_ptr<awaited_completion>& self)
    {
        return [self](const boost::system::error_code& ec, std::size_t bytes) {
            std::lock_guard<std::mutex> lock(self->mutex);
            self->ec = ec;
            self->bytes = bytes;
            self->done = true;
            self->cv.notify_all();
        };
    }
    void wait()
    {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [this] { return done; });
    }
    /*! After wait(): the bytes sent, or the OSError of the failure (\p call names
     * the call; a full queue, EAGAIN, says how to make room). */
    std::size_t bytes_or_raise(const std::string& call) const
    {
        if (ec == boost::asio::error::would_block)
            raise_os_error(std::system_error(
                ec.value(),
                std::generic_category(),
                call +
                    ": the send queue is full (StreamConfig.max_heaps); wait for sends "
                    "to finish (flush()) or raise max_heaps"));
        if (ec)
            raise_os_error(std::system_error(
                ec.value(), std::generic_category(), call + ": " + ec.message()));
        return bytes;
    }
};

/*! (heap, cnt, substream_index) of a HeapReference. */
using heap_ref = std::tuple<heap_ptr, std::int64_t, std::size_t>;

struct completion {
    std::uint64_t token;
    boost::system::error_code ec;
    std::size_t bytes;
    std::vector<heap_ptr> heaps; // released with the GIL held, in take_completions()
};

class py_send_stream
{
public:
    py_send_stream(std::shared_ptr<thread_pool> pool) : d_pool(std::move(pool))
    {
        if (!d_pool)
            throw std::invalid_argument("thread_pool: None; give a spead.ThreadPool()");
    }

    ~py_send_stream()
    {
        d_metrics = {}; // no scrape reads the stream from here on
        {
            py::gil_scoped_release release; // sends what is queued, joins the writer
            d_stream.reset();
        }
        if (d_event_fd >= 0)
            ::close(d_event_fd);
    }

    /*! Makes the stream of \p link's kind with \p config, the GIL released (a
     * connected link may take up to its connect timeout); \p socket (a caller's
     * socket, duplicated), when given, goes before the link config. */
    template <typename Stream, typename Link, typename... Socket>
    void open(const py_send_config& config, const Link& link, Socket... socket)
    {
        send::stream_config settings = config.config;
        // Only an RC link carries messages beyond a UDP-sized packet: the others check
        // max_packet_size as a packet, with the setter's message.
        if constexpr (!std::is_same_v<Link, send::rdma_config>)
            settings.set_max_packet_size(settings.get_max_packet_size());
        // Handlers only record and wake: short enough for the writer thread.
        settings.set_inline_completions(true);
        const auto& resolved = link_config(link);
        translating_os_errors([&] {
            py::gil_scoped_release release;
            d_stream =
                std::make_unique<Stream>(d_pool->io(), settings, socket..., resolved);
            return 0;
        });
        const auto [transport, endpoint] = link_labels(resolved);
        d_metrics = expose_stream(config.metrics, *d_stream, transport, endpoint);
    }

    /*! Makes a stream that writes its packets back to back into memory (spead2's
     * BytesStream), read with bytes(). */
    void open_bytes(const py_send_config& config)
    {
        send::stream_config settings = config.config;
        settings.set_max_packet_size(settings.get_max_packet_size());
        settings.set_inline_completions(true);
        d_bytes = std::make_unique<std::stringbuf>();
        d_stream =
            std::make_unique<send::streambuf_stream>(d_pool->io(), *d_bytes, settings);
        d_metrics = expose_stream(config.metrics, *d_stream, "memory", "bytes");
    }

    /*! What a BytesStream has written, once every queued heap has been sent. */
    py::bytes bytes()
    {
        if (!d_bytes)
            throw std::logic_error("getvalue: only a BytesStream writes to memory");
        std::string out;
        {
            py::gil_scoped_release release;
            d_stream->flush();
            out = d_bytes->str();
        }
        return py::bytes(out);
    }

    /*! InprocStream's queues, one per substream. */
    std::vector<std::shared_ptr<inproc_queue>> queues() const
    {
        const auto* inproc = dynamic_cast<const send::inproc_stream*>(d_stream.get());
        if (!inproc)
            throw std::logic_error("queues: only an InprocStream has queues");
        return inproc->get_queues();
    }

    /*! As spead2: queues the heap and waits for it; a full queue is an OSError
     * (EAGAIN) at once, not a wait. */
    std::size_t send_heap(const heap_ptr& h, std::int64_t cnt, std::size_t substream)
    {
        check_substream(substream);
        auto state = std::make_shared<awaited_completion>();
        {
            py::gil_scoped_release release;
            d_stream->async_send_heap(
                h->heap, awaited_completion::handler(state), cnt, substream);
            state->wait();
        }
        return state->bytes_or_raise("send_heap");
    }

    /*! Sends every heap, keeping the queue full, and waits for all of them. */
    std::size_t send_heaps(const std::vector<heap_ref>& refs)
    {
        for (const auto& r : refs)
            check_substream(std::get<2>(r));
        struct batch_state {
            std::mutex mutex;
            std::condition_variable done;
            std::size_t in_flight = 0;
            std::size_t bytes = 0;
            boost::system::error_code ec;
        };
        auto state = std::make_shared<batch_state>();
        const std::size_t limit = d_stream->get_config().get_max_heaps();
        {
            py::gil_scoped_release release;
            for (const auto& [h, cnt, substream] : refs) {
                {
                    std::unique_lock<std::mutex> lock(state->mutex);
                    state->done.wait(lock, [&] { return state->in_flight < limit; });
                    state->in_flight++;
                }
                d_stream->async_send_heap(
                    h->heap,
                    [state](const boost::system::error_code& ec, std::size_t bytes) {
                        std::lock_guard<std::mutex> lock(state->mutex);
                        state->in_flight--;
                        state->bytes += bytes;
                        if (ec && !state->ec)
                            state->ec = ec;
                        state->done.notify_all();
                    },
                    cnt,
                    substream);
            }
            std::unique_lock<std::mutex> lock(state->mutex);
            state->done.wait(lock, [&] { return state->in_flight == 0; });
        }
        if (state->ec)
            raise_os_error(std::system_error(state->ec.value(),
                                             std::generic_category(),
                                             "send_heaps: " + state->ec.message()));
        return state->bytes;
    }

    /*! spead2's send_heaps with GroupMode.ROUND_ROBIN: the heaps queued as one group
     * (all or none) whose packets interleave; waits for the group. OSError: EINVAL for
     * an empty group or a bad substream (nothing queued), EAGAIN when the group does
     * not fit the queue (max_heaps), as spead2's. */
    std::size_t send_group(const std::vector<heap_ref>& refs)
    {
        auto state = std::make_shared<awaited_completion>();
        queue_group(refs, awaited_completion::handler(state));
        {
            py::gil_scoped_release release;
            state->wait();
        }
        return state->bytes_or_raise("send_heaps");
    }

    /*! The asyncio form of send_group(): a token, as async_send_heap's. */
    std::uint64_t async_send_group(const std::vector<heap_ref>& refs)
    {
        event_fd();
        const std::uint64_t token = ++d_last_token;
        std::vector<heap_ptr> heaps;
        for (const auto& r : refs)
            heaps.push_back(std::get<0>(r));
        queue_group(
            refs,
            [this, token, heaps = std::move(heaps)](const boost::system::error_code& ec,
                                                    std::size_t bytes) mutable {
                std::lock_guard<std::mutex> lock(d_mutex);
                d_completions.push_back(completion{ token, ec, bytes, std::move(heaps) });
                signal_event_fd(d_event_fd);
            });
        return token;
    }

    /*! Queues a heap; its completion comes back through event_fd()/take_completions(). */
    std::uint64_t async_send_heap(heap_ptr h, std::int64_t cnt, std::size_t substream)
    {
        check_substream(substream);
        event_fd();
        const std::uint64_t token = ++d_last_token;
        send::heap& heap = h->heap;
        d_stream->async_send_heap(
            heap,
            [this, token, h = std::move(h)](const boost::system::error_code& ec,
                                            std::size_t bytes) mutable {
                std::lock_guard<std::mutex> lock(d_mutex);
                d_completions.push_back(completion{ token, ec, bytes, { std::move(h) } });
                signal_event_fd(d_event_fd);
            },
            cnt,
            substream);
        return token;
    }

    int event_fd()
    {
        if (d_event_fd < 0) {
            d_event_fd = make_event_fd();
        }
        return d_event_fd;
    }

    /*! [(token, errno or 0, message, bytes)] of the sends finished since the last call.
     */
    py::list take_completions()
    {
        std::deque<completion> done;
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            drain_event_fd(d_event_fd);
            done.swap(d_completions);
        }
        py::list out;
        for (const auto& c : done)
            out.append(py::make_tuple(
                c.token, c.ec.value(), c.ec ? c.ec.message() : std::string(), c.bytes));
        return out;
    }

    void flush()
    {
        py::gil_scoped_release release;
        d_stream->flush();
    }

    void set_cnt_sequence(std::uint64_t next, std::uint64_t step)
    {
        if (step == 0)
            throw std::invalid_argument(
                "step: 0 would repeat the heap cnt; give 1 or more");
        d_stream->set_cnt_sequence(next, step);
    }

    std::size_t num_substreams() const { return d_stream->get_num_substreams(); }

    std::vector<std::pair<std::string, std::uint64_t>> stats() const
    {
        return d_stream->get_stats().items();
    }

private:
    template <typename Link>
    static const Link& link_config(const Link& link)
    {
        return link;
    }

    /*! The ibverbs config with its memory regions, whose buffers this stream holds. */
    send::udp_ibv_config link_config(const py_send_udp_ibv& ibv)
    {
        send::udp_ibv_config out = ibv.resolved();
        for (auto region : ibv.memory_regions) {
            auto info = contiguous_buffer(region, "memory_regions");
            out.add_memory_region(info->ptr, std::size_t(info->size * info->itemsize));
            d_regions.push_back(std::move(info));
        }
        return out;
    }

    /*! Queues \p refs as one round-robin group; a refused group comes to \p done
     * (would_block), a bad one is an OSError (EINVAL) at once. */
    void queue_group(const std::vector<heap_ref>& refs,
                     send::stream::completion_handler done)
    {
        std::vector<send::heap_reference> group;
        for (const auto& [h, cnt, substream] : refs)
            group.push_back({ &h->heap, cnt, substream });
        try {
            py::gil_scoped_release release;
            d_stream->async_send_heaps(
                group, std::move(done), send::group_mode::round_robin);
        } catch (const std::invalid_argument& e) {
            raise_os_error(std::system_error(EINVAL, std::generic_category(), e.what()));
        }
    }

    void check_substream(std::size_t substream) const
    {
        if (substream >= d_stream->get_num_substreams())
            throw std::invalid_argument(
                "substream_index: " + std::to_string(substream) + " is beyond the " +
                std::to_string(d_stream->get_num_substreams()) +
                " endpoints of this stream; give 0 to " +
                std::to_string(d_stream->get_num_substreams() - 1));
    }

    std::shared_ptr<thread_pool> d_pool;
    std::vector<std::unique_ptr<py::buffer_info>> d_regions;
    std::mutex d_mutex;
    std::deque<completion> d_completions;
    int d_event_fd = -1;
    std::uint64_t d_last_token = 0;
    std::unique_ptr<std::stringbuf> d_bytes; // a BytesStream's memory
    std::unique_ptr<send::stream> d_stream;  // goes before what it uses
    metrics::registration d_metrics; // last: no scrape reads the stream once it goes
};

/*! _Stream._open(thread_pool, config, link_config) for links of type Link, or with
 * Socket = int _Stream._open_socket(thread_pool, config, socket, link_config): the
 * stream on a duplicate of the caller's socket (a file descriptor). */
template <typename Stream, typename Link, typename... Socket>
void def_open(py::class_<py_send_stream>& cls, const char* name = "_open")
{
    cls.def_static(name,
                   [](std::shared_ptr<thread_pool> pool,
                      const py_send_config& config,
                      Socket... socket,
                      const Link& link) {
                       auto s = std::make_unique<py_send_stream>(std::move(pool));
                       s->open<Stream>(config, link, socket...);
                       return s;
                   });
}

} // namespace

void bind_api_send(py::module& parent)
{
    auto m =
        parent.def_submodule("_send", "gr-spead's send streams for gnuradio.spead.send");

    bind_send_configs(m);

    py::class_<py_send_heap, heap_ptr>(m, "Heap", "A heap to send (as spead2.send.Heap).")
        .def(py::init([](const py::object& flavour) {
                 if (flavour.is_none())
                     return std::make_shared<py_send_heap>(
                         py_flavour{ gr::spead::flavour(), 0 });
                 if (!py::isinstance<py_flavour>(flavour))
                     throw std::invalid_argument(
                         "flavour: " + py::str(py::repr(flavour)).cast<std::string>() +
                         " is not a spead.Flavour");
                 return std::make_shared<py_send_heap>(flavour.cast<py_flavour>());
             }),
             py::arg("flavour") = py::none())
        .def_property_readonly("flavour", [](const py_send_heap& h) { return h.flavour; })
        .def("add_item", &py_send_heap::add_item, py::arg("item"))
        .def("add_descriptor", &py_send_heap::add_descriptor, py::arg("descriptor"))
        .def("add_start", [](py_send_heap& h) { h.heap.add_start(); })
        .def("add_end", [](py_send_heap& h) { h.heap.add_end(); })
        .def_property(
            "repeat_pointers",
            [](const py_send_heap& h) { return h.heap.get_repeat_immediates(); },
            [](py_send_heap& h, bool repeat) { h.heap.set_repeat_immediates(repeat); });

    py::class_<py_packet_generator>(
        m,
        "PacketGenerator",
        "A heap's packets, as bytes (as spead2.send.PacketGenerator).")
        .def(py::init<heap_ptr, std::uint64_t, std::size_t>(),
             py::arg("heap"),
             py::arg("cnt"),
             py::arg("max_packet_size"))
        .def("__iter__", [](py::object self) { return self; })
        .def("__next__", &py_packet_generator::next);

    py::class_<py_send_stream> stream(m, "_Stream");
    stream.def_static(
        "_open_bytes",
        [](std::shared_ptr<thread_pool> pool, const py_send_config& config) {
            auto s = std::make_unique<py_send_stream>(std::move(pool));
            s->open_bytes(config);
            return s;
        },
        py::arg("thread_pool"),
        py::arg("config"));
    def_open<send::inproc_stream, std::vector<std::shared_ptr<inproc_queue>>>(stream);
    def_open<send::udp_stream, send::udp_config>(stream);
    def_open<send::udp_ibv_stream, py_send_udp_ibv>(stream);
    def_open<send::tcp_stream, send::tcp_config>(stream);
    def_open<send::rdma_stream, send::rdma_config>(stream);
    def_open<send::udp_stream, send::udp_config, int>(stream, "_open_socket");
    def_open<send::tcp_stream, send::tcp_config, int>(stream, "_open_socket");
    stream
        .def("send_heap",
             &py_send_stream::send_heap,
             py::arg("heap"),
             py::arg("cnt") = -1,
             py::arg("substream_index") = 0)
        .def("_send_heaps", &py_send_stream::send_heaps)
        .def("_send_group", &py_send_stream::send_group)
        .def("_async_send_group", &py_send_stream::async_send_group)
        .def("_async_send_heap", &py_send_stream::async_send_heap)
        .def("_event_fd", &py_send_stream::event_fd)
        .def("_take_completions", &py_send_stream::take_completions)
        .def("flush", &py_send_stream::flush)
        .def("set_cnt_sequence",
             &py_send_stream::set_cnt_sequence,
             py::arg("next"),
             py::arg("step"))
        .def_property_readonly("num_substreams", &py_send_stream::num_substreams)
        .def("_bytes", &py_send_stream::bytes)
        .def("_queues", &py_send_stream::queues)
        .def("_stats", &py_send_stream::stats);
}

} // namespace python
} // namespace spead
} // namespace gr
