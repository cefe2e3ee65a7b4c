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
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    d_stream = std::move(stream);
}

void send_slots::close()
{
    if (!d_stream)
        return;
    d_stream->flush();
    d_io.poll(); // completion handlers free the slots
    std::unique_ptr<send::stream> stream;
    {
        std::lock_guard<std::mutex> lock(d_stream_mutex);
        d_last_stats = d_stream->get_stats();
        stream = std::move(d_stream);
    }
    stream.reset(); // joins the writer, closes the socket or the file
    d_io.poll();
    for (slot& s : d_slots) {
        s.busy = false;
        s.heap.reset();
    }
}

send_stats send_slots::stats() const
{
    std::lock_guard<std::mutex> lock(d_stream_mutex);
    return d_stream ? d_stream->get_stats() : d_last_stats;
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
        d_stream->async_send_heap(
            *d_slots[index].heap,
            [this, index](const boost::system::error_code& ec, std::size_t) {
                release(index);
                if (ec && ec != boost::asio::error::operation_aborted &&
                    d_warned.insert(ec.message()).second && d_logger)
                    d_logger->warn("heap not (fully) sent: {} (counted in heaps_failed)",
                                   ec.message());
            },
            static_cast<std::int64_t>(cnt),
            substream);
    } catch (const std::invalid_argument&) {
        release(index);
        throw;
    }
}

void send_slots::send_now(const send::heap& h, std::uint64_t cnt, std::size_t substream)
{
    d_stream->send_heap(h, static_cast<std::int64_t>(cnt), substream);
}

} // namespace spead
} // namespace gr
