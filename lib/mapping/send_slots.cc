/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/send_slots.h"
#include <boost/asio/error.hpp>
#include <algorithm>
#include <chrono>

namespace gr {
namespace spead {

namespace {
/*! How long a wait for a free slot lasts before on_wait is called again. */
constexpr std::chrono::milliseconds slot_wait(100);
/*! How soon wait() first looks for completions, and how seldom at most. */
constexpr std::chrono::microseconds first_look(20);
constexpr std::chrono::milliseconds last_look(1);
} // namespace

send_slots::send_slots(std::size_t slots, gr::logger_ptr logger)
    : d_logger(std::move(logger)),
      d_io_guard(boost::asio::make_work_guard(d_io)),
      d_slots(slots)
{
}

send_slots::~send_slots() { close(); }

void send_slots::open(std::unique_ptr<send::stream> stream)
{
    d_substreams = stream->get_num_substreams();
    d_inline = stream->get_config().get_inline_completions();
    std::vector<std::unique_ptr<send::stream>> one;
    one.push_back(std::move(stream));
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    d_streams = std::move(one);
}

void send_slots::open(std::vector<std::unique_ptr<send::stream>> streams)
{
    if (streams.size() == 1)
        return open(std::move(streams.front()));
    d_substreams = streams.size();
    d_inline = streams.front()->get_config().get_inline_completions();
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    d_streams = std::move(streams);
}

namespace {
send_stats summed(const std::vector<std::unique_ptr<send::stream>>& streams)
{
    send_stats total;
    for (const auto& s : streams)
        total += s->get_stats();
    return total;
}
} // namespace

void send_slots::close(bool flush)
{
    if (d_streams.empty())
        return;
    for (const auto& s : d_streams)
        if (flush)
            s->flush();
    reap();
    std::vector<std::unique_ptr<send::stream>> streams;
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        d_last_stats = summed(d_streams);
        streams = std::move(d_streams);
        d_streams.clear();
    }
    streams.clear(); // joins the writers, closes the sockets or the file
    reap();
    {
        // Heaps abandoned (flush false) complete nowhere.
        std::lock_guard<std::mutex> lock(d_completions.mutex);
        d_completions.in_flight = 0;
        d_completions.done.clear();
    }
    for (std::size_t i = 0; i < d_slots.size(); i++)
        release(i);
}

send_stats send_slots::stats() const
{
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    return d_streams.empty() ? d_last_stats : summed(d_streams);
}

std::vector<send_slots::stream_snapshot> send_slots::stream_snapshots() const
{
    std::vector<stream_snapshot> out;
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    for (const auto& s : d_streams)
        out.push_back({ s->get_stats(), s->get_queued_heaps() });
    return out;
}

bool send_slots::has_failed() const
{
    // d_streams changes only on this (the work) thread.
    for (const auto& s : d_streams)
        if (s->has_failed())
            return true;
    return false;
}

std::string send_slots::failure() const
{
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    for (const auto& s : d_streams)
        if (s->has_failed())
            return s->get_failure();
    return {};
}

send_slots::slot& send_slots::take(const flavour& f, std::size_t& index)
{
    for (;;) {
        reap();
        for (std::size_t i = 0; i < d_slots.size(); i++) {
            slot& s = d_slots[i];
            if (s.busy)
                continue;
            s.busy = true;
            s.heap.emplace(f);
            index = i;
            return s;
        }
        // Backpressure: the network is slower than the flowgraph.
        wait();
    }
}

send_slots::slot_ref send_slots::acquire(std::size_t bytes, const flavour& f)
{
    std::size_t index = 0;
    slot& s = take(f, index);
    s.payload.resize(bytes);
    return { index, s.payload.data(), *s.heap };
}

send_slots::slot_ref send_slots::acquire_in_place(const flavour& f, std::uint64_t hold)
{
    std::size_t index = 0;
    slot& s = take(f, index);
    s.hold = hold;
    return { index, nullptr, *s.heap };
}

std::uint64_t send_slots::first_held()
{
    reap();
    std::uint64_t first = no_hold;
    for (const slot& s : d_slots)
        if (s.busy)
            first = std::min(first, s.hold);
    return first;
}

void send_slots::wait()
{
    if (d_on_wait)
        d_on_wait();
    if (!d_inline) {
        d_io.run_one_for(slot_wait);
        return;
    }
    if (d_io.poll() > 0)
        return; // a refused heap's completion, posted
    // The writer wakes this thread only once it has nothing left to send (a wake-up
    // then costs it nothing); before that, this thread looks for itself, ever less
    // often: a wake-up per heap would take the writer's time.
    completions& c = d_completions;
    std::unique_lock<std::mutex> lock(c.mutex);
    const auto until = std::chrono::steady_clock::now() + slot_wait;
    auto pause = first_look;
    c.waiting = true;
    while (c.done.empty() && std::chrono::steady_clock::now() < until) {
        c.woken.wait_for(lock, pause);
        pause = std::min<std::chrono::microseconds>(2 * pause, last_look);
    }
    c.waiting = false;
}

void send_slots::finished(std::size_t index, const boost::system::error_code& ec)
{
    completions& c = d_completions;
    bool wake = false;
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        c.done.emplace_back(index, ec);
        c.in_flight--;
        wake = c.waiting && c.in_flight == 0;
    }
    if (wake)
        c.woken.notify_one();
}

void send_slots::reap()
{
    d_io.poll(); // completions posted: a stream not inline, or a refused heap
    std::vector<std::pair<std::size_t, boost::system::error_code>> done;
    {
        std::lock_guard<std::mutex> lock(d_completions.mutex);
        if (d_completions.done.empty())
            return;
        done.swap(d_completions.done);
    }
    for (const auto& [index, ec] : done) {
        release(index);
        if (ec && ec != boost::asio::error::operation_aborted &&
            d_warned.insert(ec.message()).second && d_logger)
            d_logger->warn("heap not (fully) sent: {} (counted in heaps_failed)",
                           ec.message());
    }
}

void send_slots::release(std::size_t index)
{
    d_slots[index].heap.reset();
    d_slots[index].hold = no_hold;
    d_slots[index].busy = false;
}

void send_slots::send(std::size_t index, std::uint64_t cnt, std::size_t substream)
{
    {
        std::lock_guard<std::mutex> lock(d_completions.mutex);
        d_completions.in_flight++;
    }
    try {
        const bool per_substream = d_streams.size() > 1;
        // Inline, this runs on the writer's thread.
        d_streams[per_substream ? substream : 0]->async_send_heap(
            *d_slots[index].heap,
            [this, index](const boost::system::error_code& ec, std::size_t) {
                finished(index, ec);
            },
            static_cast<std::int64_t>(cnt),
            per_substream ? 0 : substream);
    } catch (const std::invalid_argument&) {
        {
            std::lock_guard<std::mutex> lock(d_completions.mutex);
            d_completions.in_flight--;
        }
        release(index);
        throw;
    }
}

void send_slots::send_now(const send::heap& h, std::uint64_t cnt, std::size_t substream)
{
    const bool per_substream = d_streams.size() > 1;
    d_streams[per_substream ? substream : 0]->send_heap(
        h, static_cast<std::int64_t>(cnt), per_substream ? 0 : substream);
}

} // namespace spead
} // namespace gr
