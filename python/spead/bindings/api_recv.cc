/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The spead2-compatible Python API, receive side (gnuradio.spead._recv): heaps whose
 * items numpy reads without a copy, and the stream the Python recv.Stream builds on
 * (its configs: api_recv_config.cc; its readers: api_recv_readers.cc). The argument
 * handling of spead2's overloads lives in python/spead/recv/. */

#include "api_metrics.h"
#include "api_recv_readers.h"

#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/recv_heap.h>
#include <condition_variable>
#include <unistd.h>
#include <chrono>
#include <mutex>
#include <optional>

namespace gr {
namespace spead {
namespace python {

namespace {

using namespace std::chrono_literals;

/*! A received heap shared by its Python object and every item view of it: the
 * storage goes back to the stream's pool once the last of them is gone. */
struct heap_ref {
    std::shared_ptr<const recv::heap> heap;
    int bug_compat = 0;

    py_flavour flavour() const { return py_flavour{ heap->get_flavour(), bug_compat }; }
};
struct complete_heap : heap_ref {
};
struct incomplete_heap : heap_ref {
};

/*! One item of a heap (spead2.recv.RawItem); its bytes through the buffer protocol. */
struct raw_item {
    std::shared_ptr<const recv::heap> heap; // keeps data valid
    recv::item item;
};

py::list heap_items(const heap_ref& h)
{
    py::list out;
    for (const auto& it : h.heap->items())
        out.append(raw_item{ h.heap, it });
    return out;
}

/*! spead2's IncompleteHeap.get_items(): the immediates only, since an addressed
 * item's bytes may be missing. */
py::list incomplete_heap_items(const heap_ref& h)
{
    py::list out;
    for (const auto& it : h.heap->items())
        if (it.is_immediate)
            out.append(raw_item{ h.heap, it });
    return out;
}

py::list heap_descriptors(const heap_ref& h)
{
    py::list out;
    for (auto& d :
         h.heap->descriptors((h.bug_compat & bug_compat_descriptor_widths) != 0))
        out.append(std::move(d));
    return out;
}

/*! A recv::stream and the hand-off that lets asyncio wait on an eventfd. */
class py_stream
{
public:
    py_stream(std::shared_ptr<thread_pool> pool,
              const py_recv_config& config,
              const py_ring_config& ring_config)
        : d_pool(std::move(pool)),
          d_config(config),
          d_ring_config(ring_config),
          d_stream(std::make_unique<recv::stream>(merged(config, ring_config))),
          d_bug_compat(config.bug_compat)
    {
        if (!d_pool)
            throw std::invalid_argument("thread_pool: None; give a spead.ThreadPool()");
        d_metrics = expose_stream(config.metrics, *d_stream);
    }

    ~py_stream()
    {
        py::gil_scoped_release release;
        d_stream->stop(); // first: the forwarder's wait in pop() ends at once
        stop_forwarder();
        if (d_event_fd >= 0)
            ::close(d_event_fd);
    }

    recv::stream& stream() { return *d_stream; }
    counters custom_stats() const { return {}; } // none: only chunk streams count any
    const py_recv_config& config() const { return d_config; }
    const py_ring_config& ring_config() const { return d_ring_config; }

    /*! Waits for a heap, the GIL released, in slices short enough for Ctrl-C. */
    py::object get(const py::object& timeout)
    {
        const bool forever = timeout.is_none();
        const auto deadline =
            std::chrono::steady_clock::now() +
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double>(forever ? 0.0 : timeout.cast<double>()));
        recv::heap h;
        for (;;) {
            auto slice = std::chrono::microseconds(100000);
            if (!forever) {
                const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
                    deadline - std::chrono::steady_clock::now());
                slice = std::max(std::chrono::microseconds(0), std::min(slice, left));
            }
            recv::stream::pop_result result;
            {
                py::gil_scoped_release release;
                result = d_stream->pop(h, slice);
            }
            if (result == recv::stream::pop_result::heap)
                return wrap(std::move(h));
            if (result == recv::stream::pop_result::stopped)
                throw_stopped();
            if (PyErr_CheckSignals() != 0)
                throw py::error_already_set();
            if (!forever && std::chrono::steady_clock::now() >= deadline)
                throw empty("no heap arrived within the timeout");
        }
    }

    py::object get_nowait()
    {
        recv::heap h;
        if (d_stream->try_pop(h))
            return wrap(std::move(h));
        if (d_stream->is_stopped()) {
            // a heap may have been queued just before the end
            if (d_stream->try_pop(h))
                return wrap(std::move(h));
            throw_stopped();
        }
        throw empty("no heap is ready");
    }

    void stop()
    {
        py::gil_scoped_release release;
        d_stream->stop();
    }

    bool is_stopped() const { return d_stream->is_stopped(); }

    /*! For asyncio: an eventfd that is readable once take_ready() has something to
     * say (a heap, or the end). A C++ thread moves one heap at a time out of the
     * stream, so the event loop never polls and Python runs no thread. */
    int event_fd()
    {
        if (d_event_fd < 0) {
            d_event_fd = make_event_fd();
            d_forwarder = std::thread([this] { forward(); });
        }
        return d_event_fd;
    }

    /*! The heap the forwarder holds; Empty when none yet, Stopped at the end. */
    py::object take_ready()
    {
        std::optional<recv::heap> h;
        bool ended;
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            drain_event_fd(d_event_fd);
            h.swap(d_ready);
            ended = d_ended;
        }
        if (h) {
            d_ready_taken.notify_one();
            return wrap(std::move(*h));
        }
        if (ended)
            throw_stopped();
        throw empty("no heap is ready");
    }

private:
    py::object wrap(recv::heap&& h)
    {
        const bool complete = h.is_complete();
        auto shared = std::make_shared<const recv::heap>(std::move(h));
        if (complete)
            return py::cast(complete_heap{ { std::move(shared), d_bug_compat } });
        return py::cast(incomplete_heap{ { std::move(shared), d_bug_compat } });
    }

    [[noreturn]] void throw_stopped()
    {
        if (d_stream->has_failed())
            throw std::runtime_error("the stream failed: " + d_stream->get_failure());
        throw stopped("the stream has stopped");
    }

    void forward()
    {
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(d_mutex);
                d_ready_taken.wait(lock, [this] { return !d_ready || d_quit; });
                if (d_quit)
                    return;
            }
            // A long wait: stop() (and the destructor, which stops first) ends it.
            recv::heap h;
            const auto result = d_stream->pop(h, 1s);
            if (result == recv::stream::pop_result::timeout)
                continue;
            {
                std::lock_guard<std::mutex> lock(d_mutex);
                if (result == recv::stream::pop_result::heap)
                    d_ready.emplace(std::move(h));
                else
                    d_ended = true;
                signal_event_fd(d_event_fd);
            }
            if (result == recv::stream::pop_result::stopped)
                return;
        }
    }

    void stop_forwarder()
    {
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            d_quit = true;
        }
        d_ready_taken.notify_one();
        if (d_forwarder.joinable())
            d_forwarder.join();
    }

    std::shared_ptr<thread_pool> d_pool;
    py_recv_config d_config;
    py_ring_config d_ring_config;
    std::unique_ptr<recv::stream> d_stream;
    int d_bug_compat;

    std::mutex d_mutex;
    std::condition_variable d_ready_taken;
    std::optional<recv::heap> d_ready;
    bool d_ended = false;
    bool d_quit = false;
    int d_event_fd = -1;
    std::thread d_forwarder;         // joined before the rest goes
    metrics::registration d_metrics; // last: no scrape reads the stream once it goes
};

} // namespace

void bind_api_recv(py::module& parent)
{
    auto m = parent.def_submodule("_recv",
                                  "gr-spead's receive streams for gnuradio.spead.recv");

    bind_recv_configs(m);

    py::class_<raw_item>(
        m, "RawItem", py::buffer_protocol(), "One item of a received heap.")
        .def_property_readonly("id", [](const raw_item& r) { return r.item.id; })
        .def_property_readonly("is_immediate",
                               [](const raw_item& r) { return r.item.is_immediate; })
        .def_property_readonly("immediate_value",
                               [](const raw_item& r) { return r.item.immediate_value; })
        .def("__len__", [](const raw_item& r) { return r.item.length; })
        .def_buffer([](raw_item& r) {
            return py::buffer_info(const_cast<std::uint8_t*>(r.item.data),
                                   1,
                                   py::format_descriptor<std::uint8_t>::format(),
                                   1,
                                   { r.item.length },
                                   { 1 },
                                   true);
        });

    py::class_<heap_ref>(m, "_HeapBase")
        .def_property_readonly("cnt", [](const heap_ref& h) { return h.heap->cnt(); })
        .def_property_readonly("flavour", &heap_ref::flavour)
        .def("get_items", &heap_items, "The items, in wire order (RawItem objects).")
        .def("get_descriptors", &heap_descriptors, "The descriptors the heap carries.")
        .def(
            "is_start_of_stream",
            [](const heap_ref& h) { return h.heap->has_stream_ctrl(stream_ctrl::start); })
        .def("is_end_of_stream", [](const heap_ref& h) { return h.heap->is_stop(); })
        .def_property_readonly("packets",
                               [](const heap_ref& h) { return h.heap->packets(); });
    py::class_<complete_heap, heap_ref>(m, "Heap", "A complete received heap.");
    py::class_<incomplete_heap, heap_ref>(
        m,
        "IncompleteHeap",
        "A heap that left the live window with bytes missing (zero-filled).")
        .def("get_items",
             &incomplete_heap_items,
             "The immediate items only, in wire order (as spead2: an addressed item's "
             "bytes may be missing).")
        .def_property_readonly("heap_length",
                               [](const incomplete_heap& h) {
                                   return static_cast<std::int64_t>(h.heap->size());
                               })
        .def_property_readonly(
            "received_length",
            [](const incomplete_heap& h) { return h.heap->received_bytes(); })
        .def_property_readonly("payload_ranges", [](const incomplete_heap& h) {
            py::list out;
            for (const auto& r : h.heap->received_ranges())
                out.append(py::make_tuple(r.first, r.second));
            return out;
        });

    py::class_<py_stream> stream(m, "_Stream");
    bind_stream_face<py_stream>(stream);
    stream
        .def(py::init<std::shared_ptr<thread_pool>,
                      const py_recv_config&,
                      const py_ring_config&>(),
             py::arg("thread_pool"),
             py::arg("config") = py_recv_config(),
             py::arg("ring_config") = py_ring_config())
        .def_property_readonly("config", &py_stream::config)
        .def_property_readonly("ring_config", &py_stream::ring_config)
        .def("get", &py_stream::get, py::arg("timeout") = py::none())
        .def("get_nowait", &py_stream::get_nowait)
        .def("stop", &py_stream::stop)
        .def("_is_stopped", &py_stream::is_stopped)
        .def("_event_fd", &py_stream::event_fd)
        .def("_take_ready", &py_stream::take_ready);
}

} // namespace python
} // namespace spead
} // namespace gr
