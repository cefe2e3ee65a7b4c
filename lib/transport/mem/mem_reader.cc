/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mem_reader.h"
#include <algorithm>
#include <stdexcept>

namespace gr {
namespace spead {
namespace recv {

mem_reader::mem_reader(stream& owner,
                       std::vector<packet_view> packets,
                       mem_reader_config config)
    : reader(owner), d_packets(std::move(packets)), d_config(std::move(config))
{
    if (d_config.batch == 0)
        throw std::invalid_argument("batch: 0 packets; give at least 1");
}

mem_reader::~mem_reader() = default;

void mem_reader::close()
{
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_closed = true;
    }
    d_cv.notify_all();
}

void mem_reader::fail(const std::string& what)
{
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_failure = what.empty() ? "the in-memory transport failed" : what;
        d_closed = true;
    }
    d_cv.notify_all();
}

void mem_reader::wake() { d_cv.notify_all(); }

bool mem_reader::hand_over(std::size_t first, std::size_t last)
{
    for (std::size_t i = first; i < last;) {
        std::size_t n = std::min(d_config.batch, last - i);
        if (d_config.wait_for_queue_space) {
            // A consumer that loses the CPU to the readers for a while slows the
            // reader rather than losing heaps.
            const std::size_t room = wait_for_queue_space(std::chrono::milliseconds(10));
            if (stopping())
                return false;
            n = std::min(n, room);
            if (n == 0)
                continue;
        } else if (stopping()) {
            return false;
        }
        if (!add_packets(d_packets.data() + i, n))
            return false;
        i += n;
    }
    return true;
}

void mem_reader::wait_for_end()
{
    std::unique_lock<std::mutex> lock(d_mutex);
    while (!d_closed && !stopping())
        d_cv.wait_for(lock, std::chrono::milliseconds(10));
}

void mem_reader::run()
{
    d_started = true;
    const std::size_t total = d_packets.size();
    const std::size_t per_step = d_config.packets_per_step
                                     ? d_config.packets_per_step
                                     : std::max<std::size_t>(total, 1);
    const std::size_t steps = (total + per_step - 1) / per_step;
    bool more = true;
    for (std::size_t k = 0; more && k < steps; k++) {
        if (d_config.before_step && !d_config.before_step(k, *this))
            more = false;
        else
            more = hand_over(k * per_step, std::min(total, (k + 1) * per_step));
    }
    if (more && d_config.before_step)
        d_config.before_step(steps, *this);
    if (!d_config.end_after_packets)
        wait_for_end();
    d_stopped = stopping();
    std::lock_guard<std::mutex> lock(d_mutex);
    if (!d_failure.empty())
        throw std::runtime_error(d_failure);
}

} // namespace recv
} // namespace spead
} // namespace gr
