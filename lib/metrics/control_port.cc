/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "metrics/control_port.h"
#include "metrics/metric_names.h"
#include <gnuradio/rpcregisterhelpers.h>
#include <limits>

namespace gr {
namespace spead {
namespace metrics {

counter_snapshot::counter_snapshot(reader read, std::chrono::milliseconds max_age)
    : d_read(std::move(read)), d_max_age(max_age)
{
}

std::uint64_t counter_snapshot::value(const std::string& name)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    const auto now = std::chrono::steady_clock::now();
    if (!d_fresh || now - d_read_at > d_max_age) {
        d_values = d_read();
        d_read_at = now;
        d_fresh = true;
    }
    const auto it = d_values.find(name);
    return it == d_values.end() ? 0 : it->second;
}

/*! What one knob reads: ControlPort's helpers call a member function. */
struct control_port_counters::probe {
    counter_snapshot* snapshot;
    std::string name;
    std::string help;
    // ControlPort's Thrift knobs carry signed 64-bit integers (LONG)
    long value() const { return static_cast<long>(snapshot->value(name)); }
};

control_port_counters::control_port_counters(const std::string& alias,
                                             direction way,
                                             const std::vector<std::string>& names,
                                             counter_snapshot::reader read)
    : d_snapshot(std::move(read))
{
#ifdef GR_RPCSERVER_ENABLED
    for (const std::string& name : names) {
        d_probes.push_back(
            std::make_unique<probe>(probe{ &d_snapshot, name, metric_help(way, name) }));
        probe& p = *d_probes.back();
        d_knobs.push_back(std::make_shared<rpcbasic_register_get<probe, long>>(
            alias,
            p.name.c_str(),
            &p,
            &probe::value,
            pmt::from_long(0),
            pmt::from_long(std::numeric_limits<long>::max()),
            pmt::from_long(0),
            "",
            p.help.c_str(),
            RPC_PRIVLVL_MIN,
            DISPTIME | DISPOPTSTRIP));
    }
#else
    (void)alias;
    (void)way;
    (void)names;
#endif
}

control_port_counters::~control_port_counters() { d_knobs.clear(); }

} // namespace metrics
} // namespace spead
} // namespace gr
