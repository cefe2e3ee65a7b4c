/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// frames_dropped_no_buffer of udp_ibv_reader: frames the NIC dropped for want of
// posted receive memory never reach the CQ, so they are counted from the device.
// Three sources, best first: per-flow packet counters (frames matched − frames
// completed: exact per reader), the port's out_of_buffer counter (port-wide), or
// none when the device offers neither, as the log then says once.

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_NIC_DROP_COUNTER_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_NIC_DROP_COUNTER_H

#include "device_binding.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace ibv {

class SPEAD_API nic_drop_counter
{
public:
    /*! Counts from \p flow_counters (one per flow, every flow counted) when there are
     * any, else from the port's out_of_buffer counter; logs which, and why.
     * \p counters_error: why the device gave no flow counters. The counters must
     * outlive the flows they are attached to: declare this object before the flows. */
    nic_drop_counter(const device_binding& device,
                     std::vector<counters_ptr> flow_counters,
                     int counters_error,
                     gr::logger& logger);

    /*! Called after every poll that did not fill a batch (cheap until
     * drop_count_interval has passed since the last read). \p cq_drained: the poll
     * found the CQ empty; \p frames_completed: frames the NIC put in the queue so far
     * (any status). */
    void update(bool cq_drained, std::uint64_t frames_completed);
    /*! On the way out, while nothing more is to be handed on: reads the counters a
     * last time, calling \p drain (which polls the CQ empty and returns
     * frames_completed) between reads until no frame matched in between, so the final
     * count is exact. */
    void reconcile(const std::function<std::uint64_t()>& drain);

    /*! Frames dropped so far (any thread). */
    std::uint64_t dropped() const { return d_dropped.load(std::memory_order_relaxed); }

private:
    enum class source {
        flow_counters, //!< per-flow packet counters: matched − completed, exact
        port_counter,  //!< sysfs hw_counters/out_of_buffer of the port: port-wide
        none,          //!< the device offers neither: not counted
    };
    using steady_clock = std::chrono::steady_clock;

    bool read_matched_frames(std::uint64_t& matched);
    void read_port_drops();
    void publish(std::uint64_t dropped);

    const device_binding& d_device;
    gr::logger& d_logger;
    std::vector<counters_ptr> d_flow_counters;
    source d_source = source::none;

    bool d_read_pending = false; //!< flow counters read, waiting for the CQ to drain
    std::uint64_t d_pending_matched = 0;
    steady_clock::time_point d_pending_since{};
    steady_clock::time_point d_last_read{};
    bool d_warned_counter_read = false;
    std::uint64_t d_port_last_raw = 0;
    std::uint64_t d_port_drops = 0;

    std::atomic<std::uint64_t> d_dropped{ 0 };
};

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
