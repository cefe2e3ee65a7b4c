/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_METRICS_CONTROL_PORT_H
#define INCLUDED_SPEAD_METRICS_CONTROL_PORT_H

/* A block's counters as GNU Radio ControlPort knobs ("<alias>::heaps", ...), which
 * gr-ctrlport-monitor lists when ControlPort is on. A query of many knobs at once
 * reads the block's counters once. */

#include "metrics/stream_sample.h"
#include <gnuradio/spead/api.h>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace metrics {

/*! The counters of a block, read at most once per \p max_age: ControlPort asks for
 * each knob apart. Thread-safe. */
class SPEAD_API counter_snapshot
{
public:
    using reader = std::function<std::map<std::string, std::uint64_t>()>;

    explicit counter_snapshot(
        reader read, std::chrono::milliseconds max_age = std::chrono::milliseconds(100));
    /*! \p name's value in a snapshot no older than max_age (0 for a name it lacks). */
    std::uint64_t value(const std::string& name);

private:
    reader d_read;
    std::chrono::steady_clock::duration d_max_age;
    std::mutex d_mutex;
    std::map<std::string, std::uint64_t> d_values;
    std::chrono::steady_clock::time_point d_read_at;
    bool d_fresh = false;
};

/*! Registers one read-only ControlPort knob per counter, named "<alias>::<counter>",
 * described with its docs/statistics.md meaning; unregisters them when destroyed.
 * Where GNU Radio is built without ControlPort, registers nothing. */
class SPEAD_API control_port_counters
{
public:
    control_port_counters(const std::string& alias,
                          direction way,
                          const std::vector<std::string>& names,
                          counter_snapshot::reader read);
    ~control_port_counters();
    control_port_counters(const control_port_counters&) = delete;
    control_port_counters& operator=(const control_port_counters&) = delete;

    /*! Knobs registered (0 without ControlPort). */
    std::size_t size() const { return d_knobs.size(); }

private:
    struct probe;
    counter_snapshot d_snapshot;
    std::vector<std::unique_ptr<probe>> d_probes;
    std::vector<std::shared_ptr<void>> d_knobs; // unregistered before the probes go
};

} // namespace metrics
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_METRICS_CONTROL_PORT_H */
