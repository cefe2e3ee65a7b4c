/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The spead2-compatible Python API, shared part: Flavour, ThreadPool, MemoryPool,
 * RawDescriptor, the protocol constants and the Stopped/Empty exceptions. */

#include "api_common.h"

#include <pybind11/stl.h>

#include <gnuradio/spead/inproc_queue.h>
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/memory_allocator.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cerrno>

namespace gr {
namespace spead {
namespace python {

thread_pool::thread_pool(int threads, const std::vector<int>& affinity)
    : d_work(boost::asio::make_work_guard(d_io))
{
    if (threads < 1)
        throw std::invalid_argument("threads: " + std::to_string(threads) +
                                    " is not a thread count; give 1 or more");
    // As spead2: a core that cannot be used is warned about, and that thread runs
    // unpinned (the constructor runs with the GIL held, which PyErr_WarnEx needs).
    const long cores = static_cast<long>(std::thread::hardware_concurrency());
    for (int core : affinity)
        if (core < 0 || core >= CPU_SETSIZE || (cores > 0 && core >= cores)) {
            const std::string message =
                "ThreadPool affinity: core " + std::to_string(core) +
                " does not exist (cores 0 to " + std::to_string(cores - 1) +
                "); its threads run unpinned";
            if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1) != 0)
                throw py::error_already_set();
        }
    for (int i = 0; i < threads; i++) {
        d_threads.emplace_back([this] { d_io.run(); });
        const int core = affinity.empty() ? -1 : affinity[i % affinity.size()];
        if (core >= 0 && core < CPU_SETSIZE && (cores <= 0 || core < cores)) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(core, &set);
            pthread_setaffinity_np(d_threads.back().native_handle(), sizeof(set), &set);
        }
    }
}

thread_pool::~thread_pool() { stop(); }

void thread_pool::stop()
{
    d_work.reset();
    for (auto& t : d_threads)
        if (t.joinable())
            t.join();
}

void raise_os_error(const std::system_error& e)
{
    const int err = e.code().category() == std::generic_category() ||
                            e.code().category() == std::system_category()
                        ? e.code().value()
                        : EIO;
    py::object error = py::reinterpret_steal<py::object>(
        PyObject_CallFunction(PyExc_OSError, "is", err, e.what()));
    if (!error)
        throw py::error_already_set();
    // OSError(errno, ...) gives its subclass (ConnectionRefusedError, ...): raise that
    // type, or pybind11 sees the exception change type when it normalizes it.
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    throw py::error_already_set();
}

int make_event_fd()
{
    const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0)
        raise_os_error(std::system_error(errno, std::generic_category(), "eventfd"));
    return fd;
}

void signal_event_fd(int fd)
{
    const std::uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(fd, &one, sizeof(one));
}

void drain_event_fd(int fd)
{
    std::uint64_t count;
    while (::read(fd, &count, sizeof(count)) > 0) {
    }
}

std::unique_ptr<py::buffer_info> contiguous_buffer(const py::handle& obj,
                                                   const char* parameter)
{
    if (!PyObject_CheckBuffer(obj.ptr()))
        throw std::invalid_argument(
            std::string(parameter) + ": a " +
            py::str(obj.get_type().attr("__name__")).cast<std::string>() +
            " has no buffer; give a numpy array, bytes or bytearray");
    auto info = std::make_unique<py::buffer_info>(
        py::reinterpret_borrow<py::buffer>(obj).request());
    py::ssize_t expected = info->itemsize;
    for (py::ssize_t i = info->ndim - 1; i >= 0; i--) {
        if (info->shape[i] > 1 && info->strides[i] != expected)
            throw std::invalid_argument(std::string(parameter) +
                                        ": the array is not C-contiguous; pass "
                                        "numpy.ascontiguousarray(value)");
        expected *= info->shape[i];
    }
    return info;
}

py::list shape_to_python(const std::vector<std::int64_t>& shape)
{
    py::list out;
    for (auto d : shape) {
        if (d < 0)
            out.append(py::none());
        else
            out.append(d);
    }
    return out;
}

std::vector<std::int64_t> shape_from_python(const py::handle& shape)
{
    std::vector<std::int64_t> out;
    for (auto d : shape) {
        if (d.is_none())
            out.push_back(-1);
        else
            out.push_back(d.cast<std::int64_t>());
    }
    return out;
}

namespace {

/*! spead2's MemoryPool: the stream's own heap pool (sized from max_heaps and the
 * ring) does the pooling, so this checks its numbers and takes its buffers from the
 * allocator given (an MmapAllocator; none: the default). */
struct memory_pool : memory_allocator {
    std::size_t lower, upper, max_free, initial;
    std::shared_ptr<memory_allocator> allocator;

    pointer allocate(std::size_t size) override
    {
        return allocator ? allocator->allocate(size) : memory_allocator::allocate(size);
    }
};

py_flavour
make_flavour(int version, int item_pointer_bits, int heap_address_bits, int bug_compat)
{
    if (version != 4)
        throw std::invalid_argument("version: " + std::to_string(version) +
                                    " is not supported; gr-spead speaks SPEAD version 4");
    if (item_pointer_bits != 64)
        throw std::invalid_argument(
            "item_pointer_bits: " + std::to_string(item_pointer_bits) +
            " is not supported; SPEAD-64-XX flavours have 64-bit item pointers");
    if (bug_compat < 0 || bug_compat > bug_compat_pyspead_0_5_2)
        throw std::invalid_argument(
            "bug_compat: " + std::to_string(bug_compat) +
            " has unknown bits; combine BUG_COMPAT_DESCRIPTOR_WIDTHS, "
            "BUG_COMPAT_SHAPE_BIT_1 and BUG_COMPAT_SWAP_ENDIAN (or 0)");
    return py_flavour{ gr::spead::flavour(heap_address_bits,
                                          (bug_compat & bug_compat_descriptor_widths) !=
                                              0,
                                          (bug_compat & bug_compat_shape_bit_1) != 0),
                       bug_compat };
}

} // namespace

void check_bug_compat(int bug_compat) { make_flavour(4, 64, 40, bug_compat); }

void bind_api_common(py::module& m)
{
    m.attr("BUG_COMPAT_DESCRIPTOR_WIDTHS") = bug_compat_descriptor_widths;
    m.attr("BUG_COMPAT_SHAPE_BIT_1") = bug_compat_shape_bit_1;
    m.attr("BUG_COMPAT_SWAP_ENDIAN") = bug_compat_swap_endian;
    m.attr("BUG_COMPAT_PYSPEAD_0_5_2") = bug_compat_pyspead_0_5_2;
    m.attr("NULL_ID") = item_id::null;
    m.attr("HEAP_CNT_ID") = item_id::heap_cnt;
    m.attr("HEAP_LENGTH_ID") = item_id::heap_size;
    m.attr("PAYLOAD_OFFSET_ID") = item_id::heap_offset;
    m.attr("PAYLOAD_LENGTH_ID") = item_id::payload_length;
    m.attr("DESCRIPTOR_ID") = item_id::descriptor;
    m.attr("STREAM_CTRL_ID") = item_id::stream_ctrl;
    m.attr("DESCRIPTOR_NAME_ID") = item_id::descriptor_name;
    m.attr("DESCRIPTOR_DESCRIPTION_ID") = item_id::descriptor_description;
    m.attr("DESCRIPTOR_SHAPE_ID") = item_id::descriptor_shape;
    m.attr("DESCRIPTOR_FORMAT_ID") = item_id::descriptor_format;
    m.attr("DESCRIPTOR_ID_ID") = item_id::descriptor_id;
    m.attr("DESCRIPTOR_DTYPE_ID") = item_id::descriptor_dtype;
    m.attr("CTRL_STREAM_START") = stream_ctrl::start;
    m.attr("CTRL_DESCRIPTOR_REISSUE") = stream_ctrl::descriptor_reissue;
    m.attr("CTRL_STREAM_STOP") = stream_ctrl::stop;
    m.attr("CTRL_DESCRIPTOR_UPDATE") = stream_ctrl::descriptor_update;
    m.attr("MEMCPY_STD") = 0;
    m.attr("MEMCPY_NONTEMPORAL") = 1;

    py::class_<py_flavour>(
        m, "Flavour", "A SPEAD-64-XX protocol flavour (as spead2.Flavour).")
        .def(py::init(&make_flavour),
             py::arg("version") = 4,
             py::arg("item_pointer_bits") = 64,
             py::arg("heap_address_bits") = 40,
             py::arg("bug_compat") = 0)
        .def_property_readonly("version", [](const py_flavour&) { return 4; })
        .def_property_readonly("item_pointer_bits", [](const py_flavour&) { return 64; })
        .def_property_readonly(
            "heap_address_bits",
            [](const py_flavour& f) { return f.value.heap_address_bits(); })
        .def_property_readonly("bug_compat",
                               [](const py_flavour& f) { return f.bug_compat; })
        .def("__eq__",
             [](const py_flavour& a, const py::object& b) {
                 if (!py::isinstance<py_flavour>(b))
                     return false;
                 const auto& f = b.cast<const py_flavour&>();
                 return a.value == f.value && a.bug_compat == f.bug_compat;
             })
        .def("__ne__",
             [](const py_flavour& a, const py::object& b) {
                 if (!py::isinstance<py_flavour>(b))
                     return true;
                 const auto& f = b.cast<const py_flavour&>();
                 return !(a.value == f.value && a.bug_compat == f.bug_compat);
             })
        .def("__hash__",
             [](const py_flavour& f) {
                 return f.value.heap_address_bits() * 8 + f.bug_compat;
             })
        .def("__repr__", [](const py_flavour& f) {
            return "Flavour(4, 64, " + std::to_string(f.value.heap_address_bits()) +
                   ", " + std::to_string(f.bug_compat) + ")";
        });

    py::class_<thread_pool, std::shared_ptr<thread_pool>>(
        m,
        "ThreadPool",
        "Threads that run completion handlers (as spead2.ThreadPool). gr-spead's readers "
        "and send streams own their threads, so one thread is plenty.")
        .def(py::init([](int threads, const std::vector<int>& affinity) {
                 return std::make_shared<thread_pool>(threads, affinity);
             }),
             py::arg("threads") = 1,
             py::arg("affinity") = std::vector<int>())
        .def("stop", &thread_pool::stop, py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("num_threads", &thread_pool::size)
        // As spead2: a core that cannot be used is warned about (spead2 logs it) and
        // the thread stays unpinned (spead2's tut_12 pins to core 3 on any machine).
        .def_static("set_affinity", [](int core) {
            cpu_set_t set;
            CPU_ZERO(&set);
            if (core >= 0 && core < CPU_SETSIZE)
                CPU_SET(core, &set);
            if (core < 0 || core >= CPU_SETSIZE ||
                sched_setaffinity(0, sizeof(set), &set) != 0) {
                const std::string message =
                    "ThreadPool.set_affinity: core " + std::to_string(core) +
                    " cannot be used on this machine (cores 0 to " +
                    std::to_string(std::thread::hardware_concurrency() - 1) +
                    "); this thread stays unpinned";
                if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1) != 0)
                    throw py::error_already_set();
            }
        });

    py::class_<memory_allocator, std::shared_ptr<memory_allocator>>(
        m,
        "MemoryAllocator",
        "Where a stream's heap buffers come from (as spead2.MemoryAllocator): 64-byte "
        "aligned heap memory.")
        .def(py::init<>());
    py::class_<mmap_allocator, memory_allocator, std::shared_ptr<mmap_allocator>>(
        m,
        "MmapAllocator",
        "Heap buffers mapped from the kernel and faulted in at once (as "
        "spead2.MmapAllocator): flags are added to mmap's, prefer_huge tries huge "
        "pages first.")
        .def(py::init<int, bool>(), py::arg("flags") = 0, py::arg("prefer_huge") = false)
        .def_property_readonly("flags", &mmap_allocator::get_flags)
        .def_property_readonly("prefer_huge", &mmap_allocator::get_prefer_huge);
    py::class_<memory_pool, memory_allocator, std::shared_ptr<memory_pool>>(
        m,
        "MemoryPool",
        "A pool of heap buffers (as spead2.MemoryPool). Its numbers are checked and "
        "kept; gr-spead's assembler always pools heap storage itself.")
        .def(py::init([](std::int64_t lower,
                         std::int64_t upper,
                         std::int64_t max_free,
                         std::int64_t initial,
                         const py::object& allocator) {
                 if (lower < 0 || upper < lower)
                     throw std::invalid_argument(
                         "lower, upper: " + std::to_string(lower) + ", " +
                         std::to_string(upper) +
                         " are not a size range; give 0 <= lower <= upper");
                 if (max_free < 0 || initial < 0 || initial > max_free)
                     throw std::invalid_argument(
                         "max_free, initial: " + std::to_string(max_free) + ", " +
                         std::to_string(initial) +
                         " do not fit; give 0 <= initial <= max_free");
                 if (!allocator.is_none() && !py::isinstance<memory_allocator>(allocator))
                     throw std::invalid_argument(
                         "allocator: " + py::repr(allocator).cast<std::string>() +
                         " is not a spead.MemoryAllocator; give an MmapAllocator, or "
                         "None");
                 auto p = std::make_shared<memory_pool>();
                 if (!allocator.is_none())
                     p->allocator = allocator.cast<std::shared_ptr<memory_allocator>>();
                 p->lower = lower;
                 p->upper = upper;
                 p->max_free = max_free;
                 p->initial = initial;
                 return p;
             }),
             py::arg("lower"),
             py::arg("upper"),
             py::arg("max_free"),
             py::arg("initial"),
             py::arg("allocator") = py::none())
        .def_readonly("lower", &memory_pool::lower)
        .def_readonly("upper", &memory_pool::upper)
        .def_readonly("max_free", &memory_pool::max_free)
        .def_readonly("initial", &memory_pool::initial);

    py::class_<descriptor> raw_descriptor(
        m, "RawDescriptor", "A descriptor as it travels (spead2.RawDescriptor).");
    // Its text fields travel as bytes, as spead2 gives them.
    for (const auto& [name, field] :
         { std::pair{ "name", &descriptor::name },
           std::pair{ "description", &descriptor::description },
           std::pair{ "numpy_header", &descriptor::numpy_header } })
        raw_descriptor.def_property(
            name,
            [field = field](const descriptor& d) { return py::bytes(d.*field); },
            [field = field](descriptor& d, const std::string& v) { d.*field = v; });
    raw_descriptor.def(py::init<>())
        .def_readwrite("id", &descriptor::id)
        .def_property(
            "format",
            [](const descriptor& d) {
                py::list out;
                for (const auto& f : d.format)
                    out.append(py::make_tuple(std::string(1, f.first), f.second));
                return out;
            },
            [](descriptor& d, const py::object& v) {
                d.format.clear();
                if (v.is_none())
                    return;
                for (auto field : v) {
                    auto t = py::reinterpret_borrow<py::sequence>(field);
                    const auto code = t[0].cast<std::string>();
                    if (code.size() != 1 || t.size() != 2)
                        throw std::invalid_argument(
                            "format: " + py::str(py::repr(field)).cast<std::string>() +
                            " is not a field; give (code, bits), e.g. ('u', 32)");
                    d.format.emplace_back(code[0], t[1].cast<std::int64_t>());
                }
            })
        .def_property(
            "shape",
            [](const descriptor& d) { return shape_to_python(d.shape); },
            [](descriptor& d, const py::object& v) { d.shape = shape_from_python(v); });

    py::class_<inproc_queue, std::shared_ptr<inproc_queue>>(
        m,
        "InprocQueue",
        "Packets between streams of this process (as spead2.InprocQueue): "
        "send.InprocStream writes into it, recv.Stream.add_inproc_reader reads it.")
        .def(py::init<>())
        .def(
            "add_packet",
            [](inproc_queue& q, const py::object& packet) {
                const auto info = contiguous_buffer(packet, "packet");
                if (q.is_stopped())
                    throw stopped("add_packet: the queue is stopped");
                q.add_copy(info->ptr, std::size_t(info->size * info->itemsize));
            },
            py::arg("packet"),
            "Queues a copy of one SPEAD packet; spead.Stopped once stopped.")
        .def("stop",
             &inproc_queue::stop,
             "The end of the stream: readers end once they have read what is queued.");

    py::register_exception<stopped>(m, "Stopped", PyExc_RuntimeError);
    py::register_exception<empty>(m, "Empty", PyExc_RuntimeError);
    py::register_exception<full>(m, "Full", PyExc_RuntimeError);
}

} // namespace python
} // namespace spead
} // namespace gr
