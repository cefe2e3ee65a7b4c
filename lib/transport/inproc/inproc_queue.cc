/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// inproc_queue: packets from senders to readers in one process.

#include <gnuradio/spead/inproc_queue.h>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace gr {
namespace spead {

inproc_queue::packet inproc_queue::make_packet(std::size_t size)
{
    packet p;
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        if (!d_recycled.empty()) {
            p = std::move(d_recycled.back());
            d_recycled.pop_back();
        }
    }
    p.resize(size); // a reused buffer keeps its capacity
    return p;
}

bool inproc_queue::add(packet&& p)
{
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        if (d_stopped)
            return false;
        d_packets.push_back(std::move(p));
    }
    d_available.notify_one();
    return true;
}

void inproc_queue::add_copy(const void* data, std::size_t size)
{
    packet p = make_packet(size);
    if (size > 0)
        std::memcpy(p.data(), data, size);
    if (!add(std::move(p)))
        throw std::logic_error("inproc_queue: stopped; no packet can be added after "
                               "stop() (make a new queue for a new stream)");
}

void inproc_queue::stop()
{
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_stopped = true;
    }
    d_available.notify_all();
}

bool inproc_queue::is_stopped() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_stopped;
}

inproc_queue::pop_result inproc_queue::pop(std::vector<packet>& out,
                                           std::size_t max,
                                           std::chrono::microseconds timeout)
{
    std::unique_lock<std::mutex> lock(d_mutex);
    const std::uint64_t interrupts = d_interrupts;
    d_available.wait_for(lock, timeout, [&] {
        return !d_packets.empty() || d_stopped || d_interrupts != interrupts;
    });
    if (d_packets.empty())
        return d_stopped ? pop_result::stopped : pop_result::timeout;
    const std::size_t n = std::min(std::max<std::size_t>(max, 1), d_packets.size());
    for (std::size_t i = 0; i < n; i++) {
        out.push_back(std::move(d_packets.front()));
        d_packets.pop_front();
    }
    return pop_result::packets;
}

void inproc_queue::recycle(std::vector<packet>& used)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    for (packet& p : used) {
        if (d_recycled.size() >= recycled_limit)
            break; // the rest are freed with `used`
        d_recycled.push_back(std::move(p));
    }
    used.clear();
}

void inproc_queue::interrupt()
{
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_interrupts++;
    }
    d_available.notify_all();
}

std::size_t inproc_queue::size() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_packets.size();
}

} // namespace spead
} // namespace gr
