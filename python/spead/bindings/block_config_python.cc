/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "block_config_python.h"
#include <gnuradio/spead/sink_config.h>
#include <gnuradio/spead/source_config.h>
#include <pybind11/eval.h>
#include <pybind11/stl.h>
#include <climits>
#include <stdexcept>

namespace gr {
namespace spead {
namespace python {

namespace {

[[noreturn]] void
refuse(const std::string& name, const py::handle& value, const char* why)
{
    throw py::value_error(name + ": " + py::repr(value).cast<std::string>() + " " + why);
}

bool is_whole(const py::handle& value)
{
    return !py::isinstance<py::bool_>(value) && py::hasattr(value, "__index__") &&
           !py::isinstance<py::str>(value);
}

option_value whole_from_python(const std::string& name, const py::handle& value)
{
    const py::int_ number = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
    if (!number)
        throw py::error_already_set();
    if (number < py::int_(0)) {
        if (number < py::int_(LLONG_MIN))
            refuse(name, value, "is out of range");
        return option_value(number.cast<long long>());
    }
    if (number > py::int_(ULLONG_MAX))
        refuse(name, value, "is too large; give a whole number below 2**64");
    return option_value(number.cast<unsigned long long>());
}

} // namespace

option_value value_from_python(const option_info& option, const py::handle& value)
{
    const std::string& name = option.name;
    option_value converted;
    if (py::isinstance<py::bool_>(value) ||
        (option.kind == option_kind::flag && is_whole(value)))
        converted =
            PyObject_IsTrue(value.ptr()) == 1; // 0 and 1 too, as pybind11 took them
    else if (is_whole(value))
        converted = whole_from_python(name, value);
    else if (py::isinstance<py::float_>(value) ||
             (py::hasattr(value, "__float__") && !py::isinstance<py::str>(value)))
        converted = value.cast<double>();
    else if (py::isinstance<py::str>(value))
        converted = value.cast<std::string>();
    else if (option.kind == option_kind::id_list && py::isinstance<py::iterable>(value)) {
        std::vector<std::uint64_t> ids;
        for (const auto& id : value) {
            if (!is_whole(id) || whole_from_python(name, id).get().index() != 2)
                refuse(name,
                       value,
                       "is not a list of ids; give a list or range of whole numbers >= "
                       "0, e.g. [8, 9, 10, 11] or range(8, 12), or text: '8-11'");
            ids.push_back(id.cast<std::uint64_t>());
        }
        converted = std::move(ids);
    } else
        refuse(name, value, "is not a value this option takes");
    try {
        converted.check(option.kind, name);
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    return converted;
}

option_list options_from_python(const std::vector<option_info>& options,
                                const py::args& args,
                                const py::kwargs& kwargs,
                                const char* block)
{
    if (args.size() > options.size())
        throw py::value_error(std::string(block) + ": " + std::to_string(args.size()) +
                              " positional arguments, at most " +
                              std::to_string(options.size()));
    option_list out;
    for (std::size_t i = 0; i < args.size(); ++i)
        out.emplace_back(options[i].name, value_from_python(options[i], args[i]));
    for (const auto& [key, value] : kwargs) {
        const std::string name = key.cast<std::string>();
        const option_info* found = nullptr;
        for (const auto& option : options)
            if (option.name == name)
                found = &option;
        if (!found)
            throw py::value_error(name + ": not an option of spead." + block +
                                  "; see help(spead." + block + ") for the options");
        for (const auto& given : out)
            if (given.first == name)
                throw py::value_error(name + ": given twice (by position and by name)");
        out.emplace_back(name, value_from_python(*found, value));
    }
    return out;
}

py::list options_to_python(const std::vector<option_info>& options)
{
    py::list out;
    for (const auto& o : options) {
        py::dict d;
        d["name"] = o.name;
        d["grc_id"] = o.grc_id.empty() ? o.name : o.grc_id;
        d["tab"] = o.tab;
        d["kind"] = option_kind_name(o.kind);
        d["default"] = py::eval(o.default_value.to_python());
        d["doc"] = o.doc;
        out.append(d);
    }
    return out;
}

std::string options_help(const std::vector<option_info>& options)
{
    std::string out = "Args:\n";
    for (const auto& o : options)
        out += "    " + o.name + ": (" + option_kind_name(o.kind) + ", default " +
               o.default_value.to_python() + ") " + o.doc + "\n";
    return out;
}

namespace {

/*! What source_config and sink_config share in Python. */
template <typename Config>
void bind_by_name(py::class_<Config>& c, const char* block)
{
    c.def(py::init([block](const py::args& args, const py::kwargs& kwargs) {
              return Config(options_from_python(Config::options(), args, kwargs, block));
          }),
          (std::string("Every option at its default, then those given (see help(spead.") +
           block + "))")
              .c_str())
        .def(
            "set",
            [block](Config& config, const std::string& name, const py::handle& value) {
                py::kwargs one;
                one[py::str(name)] = value;
                for (const auto& [key, v] :
                     options_from_python(Config::options(), py::args(), one, block))
                    config.set(key, v);
                return &config;
            },
            py::arg("name"),
            py::arg("value"),
            py::return_value_policy::reference,
            "Sets one option by name; ValueError naming it when refused.")
        .def_static(
            "options",
            [] { return options_to_python(Config::options()); },
            "Every option: name, grc_id, tab (GRC's), kind, default, doc.")
        .def("refusal",
             &Config::refusal,
             py::arg("transport"),
             "What that transport's config refused of the options given by name.")
        .def_property("transport", &Config::get_transport, &Config::set_transport)
        .def_property(
            "stats_interval", &Config::get_stats_interval, &Config::set_stats_interval)
        .def_property(
            "capture_file", &Config::get_capture_file, &Config::set_capture_file)
        // The parts Python binds as themselves (recv/send.UdpConfig, the items, the
        // layout): read and changed in place. The stream's and ibverbs' configs are
        // bound as spead2's classes, which hold more: set them by option name.
        .def_readwrite("udp", &Config::udp)
        .def_readwrite("continuous", &Config::continuous)
        .def_readwrite("items", &Config::items);
}

template <typename Items, typename... Extra>
py::class_<Items> bind_items(py::module& m, const char* name, const char* doc)
{
    py::class_<Items> c(m, name, doc);
    c.def(py::init<>())
        .def_property("item_type", &Items::get_item_type, &Items::set_item_type)
        .def_property("vlen", &Items::get_vlen, &Items::set_vlen)
        .def_property("len_tag_key", &Items::get_len_tag_key, &Items::set_len_tag_key)
        .def_property("byte_order", &Items::get_byte_order, &Items::set_byte_order)
        .def_property("payload_item", &Items::get_payload_item, &Items::set_payload_item)
        .def_property_readonly("item_size", &Items::get_item_size);
    return c;
}

} // namespace

void bind_block_configs(py::module& m)
{
    py::class_<continuous_layout>(
        m, "continuous_layout", "The layout a continuous source and sink agree on.")
        .def(py::init<>())
        .def_readwrite("timestamp_item", &continuous_layout::timestamp_item)
        .def_readwrite("timestamp_step", &continuous_layout::timestamp_step)
        .def_readwrite("substreams", &continuous_layout::substreams)
        .def_readwrite("substream_item", &continuous_layout::substream_item)
        .def_readwrite("item_bytes", &continuous_layout::item_bytes)
        .def("validate_layout", &continuous_layout::validate_layout);
    py::class_<recv::continuous_config, continuous_layout>(
        m, "continuous_config", "A continuous source's layout and window.")
        .def(py::init<>())
        .def_readwrite("window_heaps", &recv::continuous_config::window_heaps)
        .def_readwrite("first_substream", &recv::continuous_config::first_substream)
        .def_readwrite("substream_ids", &recv::continuous_config::substream_ids)
        .def("validate", &recv::continuous_config::validate);
    py::class_<continuous_input, continuous_layout>(
        m, "continuous_input", "A continuous sink's layout and timestamps.")
        .def(py::init<>())
        .def_readwrite("start_timestamp", &continuous_input::start_timestamp)
        .def_readwrite("sample_rate", &continuous_input::sample_rate)
        .def_readwrite("sync_time", &continuous_input::sync_time);

    bind_items<source_items>(
        m, "source_items", "How spead.source turns heaps into items.")
        .def_property("timestamp_item",
                      &source_items::get_timestamp_item,
                      &source_items::set_timestamp_item)
        .def_property(
            "sample_rate", &source_items::get_sample_rate, &source_items::set_sample_rate)
        .def_property(
            "sync_time", &source_items::get_sync_time, &source_items::set_sync_time);
    bind_items<sink_items>(m, "sink_items", "How spead.sink turns items into heaps.")
        .def_property("flavour", &sink_items::get_flavour, &sink_items::set_flavour)
        .def_property(
            "heap_items", &sink_items::get_heap_items, &sink_items::set_heap_items)
        .def_property("heap_cnt_start",
                      &sink_items::get_heap_cnt_start,
                      &sink_items::set_heap_cnt_start)
        .def_property("heap_cnt_step",
                      &sink_items::get_heap_cnt_step,
                      &sink_items::set_heap_cnt_step)
        .def_property("descriptor_interval",
                      &sink_items::get_descriptor_interval,
                      &sink_items::set_descriptor_interval)
        .def_property(
            "payload_name", &sink_items::get_payload_name, &sink_items::set_payload_name)
        .def_property("payload_description",
                      &sink_items::get_payload_description,
                      &sink_items::set_payload_description);

    py::class_<source_config> source(
        m, "source_config", "Everything spead.source runs with (docs/usage.md).");
    bind_by_name(source, "source");
    source.def_readwrite("tcp", &source_config::tcp)
        .def_readwrite("rdma", &source_config::rdma)
        .def_property("output_mode",
                      &source_config::get_output_mode,
                      &source_config::set_output_mode)
        .def_property("threads", &source_config::get_threads, &source_config::set_threads)
        .def_property("queue_heaps",
                      &source_config::get_queue_heaps,
                      &source_config::set_queue_heaps);

    py::class_<sink_config> sink(
        m, "sink_config", "Everything spead.sink runs with (docs/usage.md).");
    bind_by_name(sink, "sink");
    sink.def_property_readonly(
            "tcp",
            [](const sink_config& c) { return c.tcp; },
            "The tcp connections' configs, one per endpoint (copies: set options by "
            "name).")
        .def_property_readonly(
            "rdma",
            [](const sink_config& c) { return c.rdma; },
            "The rdma connections' configs, one per endpoint (copies).")
        .def_property(
            "input_mode", &sink_config::get_input_mode, &sink_config::set_input_mode)
        .def_property("send_stop_heap",
                      &sink_config::get_send_stop_heap,
                      &sink_config::set_send_stop_heap);
}

} // namespace python
} // namespace spead
} // namespace gr
