/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PYTHON_API_COMMON_H
#define INCLUDED_SPEAD_PYTHON_API_COMMON_H

/* What the spead2-compatible Python API (api_*.cc) shares: the thread pool that runs
 * send completion handlers, the flavour as Python sees it, and the error conventions
 * (invalid_argument -> ValueError, system_error -> OSError with its errno). */

#include <pybind11/pybind11.h>

#include <gnuradio/spead/descriptor.h>
#include <gnuradio/spead/flavour.h>
#include <system_error>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gr {
namespace spead {
namespace python {

namespace py = pybind11;

/* spead2's bug_compat bits; of them, gr-spead implements the descriptor widths. */
constexpr int bug_compat_descriptor_widths = 1;
constexpr int bug_compat_shape_bit_1 = 2;
constexpr int bug_compat_swap_endian = 4;
constexpr int bug_compat_pyspead_0_5_2 = 7;

/*!
 * spead2's ThreadPool: threads that run an io_context. gr-spead's readers and send
 * writers own their threads, so here the pool only runs completion handlers that
 * are posted to it; streams hold it by shared_ptr, so deleting the Python object
 * early is safe.
 */
class thread_pool
{
public:
    thread_pool(int threads, const std::vector<int>& affinity);
    ~thread_pool();
    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    boost::asio::io_context& io() { return d_io; }
    /*! Ends the threads once the handlers posted so far have run (idempotent). */
    void stop();
    std::size_t size() const { return d_threads.size(); }

private:
    boost::asio::io_context d_io;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> d_work;
    std::vector<std::thread> d_threads;
};

/*! spead2's Flavour: SPEAD version 4, 64-bit item pointers, plus bug_compat bits. */
struct py_flavour {
    gr::spead::flavour value;
    int bug_compat = 0;
};

/*! \throws std::invalid_argument, as spead.Flavour does, for bits gr-spead lacks */
void check_bug_compat(int bug_compat);

/*! spead2.Stopped (the stream ended), spead2.Empty (get_nowait found no heap) and
 * spead2.Full, all RuntimeErrors in Python. */
struct stopped : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct empty : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct full : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/*! Raises OSError(errno, message) for \p e (pybind11 alone would give RuntimeError). */
[[noreturn]] void raise_os_error(const std::system_error& e);

/*! Runs \p f, turning std::system_error into OSError with its errno. */
template <typename F>
auto translating_os_errors(F&& f) -> decltype(f())
{
    try {
        return f();
    } catch (const std::system_error& e) {
        raise_os_error(e);
    }
}

/*! An eventfd for asyncio's add_reader (non-blocking, close-on-exec); OSError if the
 * kernel refuses. signal_event_fd() makes it readable (any thread, no GIL needed);
 * drain_event_fd() empties it again. */
int make_event_fd();
void signal_event_fd(int fd);
void drain_event_fd(int fd);

/*! A C-contiguous view of a Python object's memory, held (with the object) for as
 * long as the heap, stream or reader that uses it. Destroy with the GIL held.
 * \throws std::invalid_argument naming \p parameter when \p obj has no buffer or is
 * not C-contiguous */
std::unique_ptr<py::buffer_info> contiguous_buffer(const py::handle& obj,
                                                   const char* parameter);

/*! The Python RawDescriptor <-> descriptor conversion for shapes (None <-> -1). */
py::list shape_to_python(const std::vector<std::int64_t>& shape);
std::vector<std::int64_t> shape_from_python(const py::handle& shape);

void bind_api_common(py::module& m);
void bind_api_recv(py::module& m);
void bind_api_recv_chunk(py::module& m);
void bind_api_send(py::module& m);

} // namespace python
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PYTHON_API_COMMON_H */
