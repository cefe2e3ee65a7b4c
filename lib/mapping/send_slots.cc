/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/send_slots.h"
#include <boost/asio/error.hpp>
#include <chrono>

namespace gr {
namespace spead {

namespace {
/*! How long a wait for a free slot lasts before on_wait is called again. */
constexpr std::chrono::milliseconds slot_wait(100);
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
    d_io.poll(); // completion handlers free the slots
    std::vector<std::unique_ptr<send::stream>> streams;
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        d_last_stats = summed(d_streams);
        streams = std::move(d_streams);
        d_streams.clear();
    }
    streams.clear(); // joins the writers, closes the sockets or the file
    d_io.poll();
    for (slot& s : d_slots) {
        s.busy = false;
        s.heap.reset();
    }
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

send_slots::slot_ref send_slots::acquire(std::size_t bytes, const flavour& f)
{
    for (;;) {
        d_io.poll();
        for (std::size_t i = 0; i < d_slots.size(); i++) {
            slot& s = d_slots[i];
            if (s.busy)
                continue;
            s.busy = true;
            s.payload.resize(bytes);
            s.heap.emplace(f);
            return { i, s.payload.data(), *s.heap };
        }
        // Backpressure: the network is slower than the flowgraph.
        if (d_on_wait)
            d_on_wait();
        d_io.run_one_for(slot_wait);
    }
}

void send_slots::release(std::size_t index)
{
    d_slots[index].heap.reset();
    d_slots[index].busy = false;
}

void send_slots::send(std::size_t index, std::uint64_t cnt, std::size_t substream)
{
    try {
        const bool per_substream = d_streams.size() > 1;
        d_streams[per_substream ? substream : 0]->async_send_heap(
            *d_slots[index].heap,
            [this, index](const boost::system::error_code& ec, std::size_t) {
                release(index);
                if (ec && ec != boost::asio::error::operation_aborted &&
                    d_warned.insert(ec.message()).second && d_logger)
                    d_logger->warn("heap not (fully) sent: {} (counted in heaps_failed)",
                                   ec.message());
            },
            static_cast<std::int64_t>(cnt),
            per_substream ? 0 : substream);
    } catch (const std::invalid_argument&) {
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
