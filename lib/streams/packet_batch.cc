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
    round_robin_group = 0;
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
      d_piece_begin(max_batch_packets),
      d_packet_heap(max_batch_packets)
{
    d_pieces.reserve(max_batch_packets * 4);
    d_spans.reserve(max_batch_packets);
    if (config.get_rate() > 0)
        d_limiter.emplace(config.get_rate(),
                          static_cast<double>(config.get_burst_size()),
                          config.get_burst_rate_ratio());
}

packet_batch::span& packet_batch::span_of(queued_heap& e)
{
    // A lone heap's packets follow one another: its span is the last one.
    if (!d_spans.empty() && d_spans.back().heap == &e)
        return d_spans.back();
    for (span& s : d_spans)
        if (s.heap == &e)
            return s;
    d_spans.push_back({ &e, 0, false });
    return d_spans.back();
}

void packet_batch::retire(queued_heap& e)
{
    const auto it = std::find(d_active.begin(), d_active.end(), &e);
    if (it == d_active.end())
        return;
    const std::size_t index = std::size_t(it - d_active.begin());
    d_active.erase(it);
    if (index < d_turn)
        d_turn--;
    if (d_turn >= d_active.size())
        d_turn = 0;
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
    // Stay within half a burst when rate limited (packets are at most mps).
    auto limit_reached = [&] { return n > 0 && bytes + mps > max_bytes; };
    while (n < max_batch_packets) {
        if (d_active.empty()) {
            queued_heap* first = d_next_heap();
            if (!first)
                break;
            d_active.push_back(first);
            // The rest of its group was queued with it (under one lock): it is there.
            for (std::size_t k = 1; k < first->round_robin_group; k++)
                d_active.push_back(d_next_heap());
            d_turn = 0;
        }
        if (limit_reached())
            break;
        queued_heap& e = *d_active[d_turn];
        packet_generator& gen = *e.generator;
        span& s = span_of(e);
        // A lone heap's packets follow one another to the batch's end; a group's take
        // turns, one packet each.
        const std::size_t until = d_active.size() == 1 ? max_batch_packets : n + 1;
        do {
            d_piece_begin[n] = d_pieces.size();
            const std::size_t size = gen.next(d_headers.data() + n * mps, d_pieces);
            d_packets[n].n_pieces = d_pieces.size() - d_piece_begin[n];
            d_packets[n].size = size;
            d_packets[n].substream = e.substream;
            d_packet_heap[n] = &e;
            bytes += size;
            n++;
        } while (n < until && gen.has_next() && !limit_reached());
        s.last = n - 1;
        if (!gen.has_next()) {
            s.finishes_heap = true;
            retire(e);
        } else if (d_active.size() > 1) {
            d_turn = (d_turn + 1) % d_active.size();
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
    // A batch cut short by the limit leaves its heap partly cut (fill() takes the next
    // heap before it checks the limit): the writer has more to send than this batch.
    if (d_limiter && n > 0)
        waited = d_limiter->acquire(batch_bytes, cutting());

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
    for (std::size_t i = 0; i < accepted; i++) {
        d_packet_heap[i]->bytes += d_packets[i].size;
        accepted_bytes += d_packets[i].size;
    }
    for (const span& s : d_spans) {
        queued_heap& e = *s.heap;
        e.done_after = d_packets_accepted + std::min(s.last + 1, accepted);
        if (s.last >= accepted) {
            // Part of the heap did not go out: it fails, and the rest of it is not sent.
            if (!e.ec)
                e.ec = ec;
            retire(e);
            e.all_cut = true;
        }
        if (s.finishes_heap)
            e.all_cut = true;
    }
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
