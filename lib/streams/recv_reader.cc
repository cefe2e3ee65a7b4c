/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/spead/recv_reader.h>
#include <gnuradio/spead/recv_stream.h>
#include <algorithm>
#include <exception>

namespace gr {
namespace spead {
namespace recv {

reader::~reader()
{
    // The stream joins every reader's thread before destroying it (stream::stop() in
    // ~stream): a thread still running here would be running run() of a destroyed
    // subclass.
    if (d_thread.joinable())
        std::terminate();
}

void reader::start()
{
    d_thread = std::thread([this] {
        try {
            run();
        } catch (const std::exception& e) {
            d_stream.reader_failed(e.what());
            return;
        }
        d_stream.reader_finished();
    });
}

void reader::join()
{
    d_stopping.store(true);
    wake();
    if (d_thread.joinable())
        d_thread.join();
}

bool reader::add_packets(const packet_view* packets, std::size_t n)
{
    return d_stream.add_packets(packets, n, 0);
}

std::size_t reader::reserve_sources(std::size_t n) { return d_stream.reserve_sources(n); }

bool reader::add_packets(const packet_view* packets, std::size_t n, std::size_t source)
{
    return d_stream.add_packets(packets, n, source);
}

void reader::end_source(std::size_t source) { d_stream.end_source(source); }

std::size_t reader::wait_for_queue_space(std::chrono::microseconds timeout)
{
    return d_stream.wait_for_queue_space(timeout);
}

std::size_t reader::lossless_batch(std::size_t max, std::chrono::microseconds timeout)
{
    const std::size_t free = wait_for_queue_space(timeout);
    if (free == 0)
        return 0;
    return std::min(max, std::max<std::size_t>(1, free / 2));
}

transport_reader::~transport_reader() = default;

transport_reader::loop::~loop() = default;

recv_stats transport_reader::transport_stats() const
{
    return d_loop ? d_loop->stats() : recv_stats();
}

void transport_reader::set_loop(std::unique_ptr<loop> l) { d_loop = std::move(l); }

void transport_reader::run() { d_loop->run(); }

void transport_reader::wake()
{
    if (d_loop) // a reader whose constructor failed is joined without a loop
        d_loop->wake();
}

} // namespace recv
} // namespace spead
} // namespace gr
