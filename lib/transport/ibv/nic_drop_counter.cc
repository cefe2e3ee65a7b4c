/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "nic_drop_counter.h"
#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

namespace gr {
namespace spead {
namespace ibv {

namespace {

using namespace std::chrono_literals;

/*! How often the NIC's drop counters are read while receiving. */
constexpr auto read_interval = 100ms;
/*! A frame's completion reaches the CQ within this time after the NIC counted the
 * frame (a DMA write: microseconds on hardware). */
constexpr auto completion_settle_time = 1ms;
/*! Bound on the attempts to read the flow counters while nothing arrives, at exit. */
constexpr int max_exit_reconciliations = 20;

/*! Reads a decimal counter file (sysfs hw_counters). \return 0, or an errno value */
int read_counter_file(const std::string& path, std::uint64_t& value)
{
    errno = 0;
    std::ifstream file(path);
    if (!file)
        return errno ? errno : ENOENT;
    std::uint64_t parsed = 0;
    if (!(file >> parsed))
        return EINVAL;
    value = parsed;
    return 0;
}

} // namespace

nic_drop_counter::nic_drop_counter(const device_binding& device,
                                   std::vector<counters_ptr> flow_counters,
                                   int counters_error,
                                   gr::logger& logger)
    : d_device(device),
      d_logger(logger),
      d_flow_counters(std::move(flow_counters)),
      d_last_read(steady_clock::now())
{
    if (!d_flow_counters.empty()) {
        d_source = source::flow_counters;
        return;
    }
    const std::string path = device.port_counter_path("out_of_buffer");
    const int port_error = read_counter_file(path, d_port_last_raw);
    if (port_error == 0) {
        d_source = source::port_counter;
        d_logger.info("frames_dropped_no_buffer counts the port's out_of_buffer counter "
                      "({}), which is port-wide: drops of other receivers on port {} of "
                      "{} count too (the device has no flow counters: {})",
                      path,
                      int(device.port_num()),
                      device.device_name(),
                      std::strerror(counters_error));
        return;
    }
    d_logger.warn("frames_dropped_no_buffer cannot be counted on {}: it has no flow "
                  "counters (ibv_create_counters: {}) and no out_of_buffer port counter "
                  "({}: {}); frames the NIC drops for want of a posted slot go uncounted",
                  device.device_name(),
                  std::strerror(counters_error),
                  path,
                  std::strerror(port_error));
}

void nic_drop_counter::update(bool cq_drained, std::uint64_t frames_completed)
{
    if (d_source == source::none)
        return;
    const auto now = steady_clock::now();
    if (d_source == source::port_counter) {
        if (now - d_last_read >= read_interval) {
            d_last_read = now;
            read_port_drops();
        }
        return;
    }
    if (!d_read_pending) {
        if (now - d_last_read < read_interval)
            return;
        d_last_read = now;
        d_read_pending = read_matched_frames(d_pending_matched);
        d_pending_since = now;
        return;
    }
    // Every frame counted before the read has completed by the time the CQ is seen
    // empty a moment later; frames completed since then make this a lower bound, which
    // a later read catches up with.
    if (cq_drained && now - d_pending_since >= completion_settle_time) {
        d_read_pending = false;
        if (d_pending_matched >= frames_completed)
            publish(d_pending_matched - frames_completed);
    }
}

void nic_drop_counter::reconcile(const std::function<std::uint64_t()>& drain)
{
    if (d_source == source::port_counter) {
        read_port_drops();
        return;
    }
    if (d_source != source::flow_counters)
        return;
    // Exact once a read of the counters is followed by the CQ drained and no frame
    // matched in between.
    for (int attempt = 0; attempt < max_exit_reconciliations; attempt++) {
        std::uint64_t before = 0, after = 0;
        if (!read_matched_frames(before))
            break;
        std::this_thread::sleep_for(completion_settle_time);
        const std::uint64_t frames_completed = drain();
        if (before >= frames_completed)
            publish(before - frames_completed);
        if (!read_matched_frames(after) || after == before)
            break;
    }
}

bool nic_drop_counter::read_matched_frames(std::uint64_t& matched)
{
    std::uint64_t sum = 0;
    for (const auto& counter : d_flow_counters) {
        std::uint64_t packets = 0;
        const int status = read_flow_packet_counter(counter.get(), packets);
        if (status != 0) {
            if (!d_warned_counter_read) {
                d_warned_counter_read = true;
                d_logger.warn("ibv_read_counters: {}; frames_dropped_no_buffer is not "
                              "updated",
                              std::strerror(status));
            }
            return false;
        }
        sum += packets;
    }
    matched = sum;
    return true;
}

void nic_drop_counter::read_port_drops()
{
    std::uint64_t raw = 0;
    if (read_counter_file(d_device.port_counter_path("out_of_buffer"), raw) != 0)
        return;
    // mlx5's queue counters are 32 bits wide: a smaller value has wrapped.
    if (raw >= d_port_last_raw)
        d_port_drops += raw - d_port_last_raw;
    else if (d_port_last_raw <= 0xffffffffu)
        d_port_drops += (raw + (std::uint64_t(1) << 32)) - d_port_last_raw;
    d_port_last_raw = raw;
    publish(d_port_drops);
}

void nic_drop_counter::publish(std::uint64_t dropped)
{
    // Never backwards: an earlier read may have been the more complete one.
    if (dropped > d_dropped.load(std::memory_order_relaxed))
        d_dropped.store(dropped, std::memory_order_relaxed);
}

} // namespace ibv
} // namespace spead
} // namespace gr
