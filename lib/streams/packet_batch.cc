/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "packet_batch.h"
#include <boost/system/error_code.hpp>
#include <algorithm>
#include <exception>

namespace gr {
namespace spead {
namespace send {
namespace detail {

namespace {
/*! Packets handed to the transport at once: enough to amortise a syscall or a
 * doorbell, small enough that the header buffer stays in cache. */
constexpr std::size_t max_batch_packets = 64;
} // namespace

void queued_heap::reset()
{
    generator.reset();
    substream = 0;
    handler = nullptr;
    waiter = nullptr;
    all_cut = false;
    done_after = 0;
    bytes = 0;
    ec.clear();
}

packet_batch::packet_batch(const stream_config& config,
                           std::function<queued_heap*()> next_heap)
    : d_max_packet_size(config.get_max_packet_size()),
      d_next_heap(std::move(next_heap)),
      d_logger("spead send_stream"),
      d_headers(max_batch_packets * config.get_max_packet_size()),
      d_packets(max_batch_packets),
      d_piece_begin(max_batch_packets)
{
    d_pieces.reserve(max_batch_packets * 4);
    d_spans.reserve(max_batch_packets);
    if (config.get_rate() > 0)
        d_limiter.emplace(config.get_rate(),
                          static_cast<double>(config.get_burst_size()));
}

std::size_t packet_batch::fill()
{
    const std::size_t mps = d_max_packet_size;
    const std::size_t max_bytes =
        d_limiter ? d_limiter->max_batch_bytes() : static_cast<std::size_t>(-1);
    d_pieces.clear();
    d_spans.clear();
    std::size_t n = 0;
    std::size_t bytes = 0;
    while (n < max_batch_packets) {
        if (!d_current) {
            d_current = d_next_heap();
            if (!d_current)
                break;
        }
        queued_heap& e = *d_current;
        packet_generator& gen = *e.generator;
        if (d_spans.empty() || d_spans.back().heap != &e)
            d_spans.push_back({ &e, n, n, false });
        span& s = d_spans.back();
        while (n < max_batch_packets && gen.has_next()) {
            // Stay within half a burst when rate limited (packets are at most mps).
            if (n > 0 && bytes + mps > max_bytes)
                break;
            d_piece_begin[n] = d_pieces.size();
            const std::size_t size = gen.next(d_headers.data() + n * mps, d_pieces);
            d_packets[n].n_pieces = d_pieces.size() - d_piece_begin[n];
            d_packets[n].size = size;
            d_packets[n].substream = e.substream;
            bytes += size;
            n++;
        }
        s.end = n;
        if (!gen.has_next()) {
            s.finishes_heap = true;
            d_current = nullptr;
        } else {
            break; // batch full
        }
    }
    // The pieces vector may have grown while cutting: point into it only now.
    for (std::size_t i = 0; i < n; i++)
        d_packets[i].pieces = d_pieces.data() + d_piece_begin[i];
    return n;
}

void packet_batch::write(std::size_t n, packet_writer& writer)
{
    std::size_t batch_bytes = 0;
    for (std::size_t i = 0; i < n; i++)
        batch_bytes += d_packets[i].size;
    bool waited = false;
    if (d_limiter && n > 0)
        waited = d_limiter->acquire(batch_bytes);

    boost::system::error_code ec;
    std::size_t accepted = 0;
    if (n > 0) {
        try {
            accepted = std::min(n, writer.write_packets(d_packets.data(), n, ec));
        } catch (const std::exception& e) {
            d_logger.error("transport failed to write packets: {}", e.what());
            ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
        }
        if (accepted < n && !ec)
            ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
    }

    std::size_t accepted_bytes = 0;
    for (const span& s : d_spans) {
        queued_heap& e = *s.heap;
        for (std::size_t i = s.first; i < std::min(s.end, accepted); i++)
            e.bytes += d_packets[i].size;
        e.done_after = d_packets_accepted + std::min(s.end, accepted);
        if (s.end > accepted) {
            // Part of the heap did not go out: it fails, and the rest of it is not sent.
            if (!e.ec)
                e.ec = ec;
            if (d_current == &e)
                d_current = nullptr;
            e.all_cut = true;
        }
        if (s.finishes_heap)
            e.all_cut = true;
    }
    for (std::size_t i = 0; i < accepted; i++)
        accepted_bytes += d_packets[i].size;
    d_packets_accepted += accepted;

    d_counts.packets += accepted;
    d_counts.bytes += accepted_bytes;
    d_counts.failed += n - accepted;
    if (waited)
        d_counts.rate_limit_waits++;
}

packet_batch::counts packet_batch::take_counts()
{
    const counts out = d_counts;
    d_counts = counts();
    return out;
}

void packet_batch::note_idle()
{
    if (d_limiter)
        d_limiter->note_idle();
}

} // namespace detail
} // namespace send
} // namespace spead
} // namespace gr
