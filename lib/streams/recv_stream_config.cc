/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Validation of a receive stream's settings (stream_config, continuous_config).

#include "chunk_placement.h"
#include <gnuradio/spead/recv_stream_config.h>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace recv {

namespace {
/*! \p n, or std::invalid_argument(\p message) for 0. */
std::size_t at_least_one(std::size_t n, const char* message)
{
    if (n == 0)
        throw std::invalid_argument(message);
    return n;
}
} // namespace

stream_config& stream_config::set_max_heaps(std::size_t n)
{
    d_max_heaps = at_least_one(
        n,
        "max_heaps: must be at least 1 (live heaps assembled at once; raise it when "
        "senders interleave heaps or packets arrive out of order)");
    return *this;
}

stream_config& stream_config::set_max_heap_size(std::size_t bytes)
{
    d_max_heap_size = at_least_one(bytes,
                                   "max_heap_size: must be at least 1 byte (the "
                                   "largest heap payload accepted; default 64 MiB)");
    return *this;
}

stream_config& stream_config::set_incomplete_heaps(incomplete_heaps policy)
{
    if (policy != incomplete_heaps::drop && policy != incomplete_heaps::deliver)
        throw std::invalid_argument(
            "incomplete_heaps: unknown policy " +
            std::to_string(static_cast<int>(policy)) +
            "; use incomplete_heaps::drop or incomplete_heaps::deliver");
    d_incomplete = policy;
    return *this;
}

stream_config& stream_config::set_queue_heaps(std::size_t n)
{
    at_least_one(n,
                 "queue_heaps: must be at least 1 (completed heaps waiting for the "
                 "consumer; default 8)");
    if (n > max_queue_heaps)
        throw std::invalid_argument(
            "queue_heaps: " + std::to_string(n) + " is more than " +
            std::to_string(max_queue_heaps) +
            " heaps waiting for the consumer; a queue that long only hides a consumer "
            "that does not keep up. Use at most " +
            std::to_string(max_queue_heaps) + " (0 in the block: chosen by heap size)");
    d_queue_heaps = n;
    return *this;
}

stream_config& stream_config::set_substreams(std::size_t n)
{
    d_substreams = at_least_one(n,
                                "substreams: must be at least 1 (windows of max_heaps "
                                "live heaps, a heap's chosen by its cnt modulo "
                                "substreams; 1 is one window)");
    return *this;
}

full_queue_policy full_queue_policy_from_name(const std::string& name)
{
    if (name == "block")
        return full_queue_policy::block;
    if (name == "drop")
        return full_queue_policy::drop;
    throw std::invalid_argument(
        "full_queue_policy: '" + name +
        "' is not a policy; use drop (the newest heap is dropped, counted in "
        "heaps_dropped_queue_full) or block (the receiver waits for its consumer, as "
        "spead2's, and the kernel drops at the socket, counted in "
        "packets_dropped_socket_overflow)");
}

stream_config& stream_config::set_full_queue_policy(full_queue_policy policy)
{
    if (policy != full_queue_policy::block && policy != full_queue_policy::drop)
        throw std::invalid_argument(
            "full_queue_policy: unknown policy " +
            std::to_string(static_cast<int>(policy)) +
            "; use full_queue_policy::block (the reader waits, as spead2) or "
            "full_queue_policy::drop (the newest heap is dropped)");
    d_full_queue_policy = policy;
    return *this;
}

void continuous_config::validate() const
{
    validate_layout(); // the fields a sink's continuous input shares, checked alike
    if (queue_positions > stream_config::max_queue_heaps)
        throw std::invalid_argument(
            "queue_positions: " + std::to_string(queue_positions) + " is more than " +
            std::to_string(stream_config::max_queue_heaps) +
            " positions waiting for the consumer (queue_heaps in the block); use at "
            "most that, or 0 to size the queue by memory (queue_bytes)");
    if (queue_positions == 0 && queue_bytes == 0)
        throw std::invalid_argument(
            "queue_bytes: 0 with queue_positions 0 leaves no room for the consumer; "
            "give either");
    // The rest are the timeline's and the chunk assembler's checks, made here too so
    // a bad value shows when the stream is made, not at its first heap.
    chunk_config_for(*this, item_bytes, incomplete_heaps::drop).validate();
}

stream_config& stream_config::set_continuous(const continuous_config& config)
{
    config.validate();
    d_continuous = true;
    d_continuous_config = config;
    return *this;
}

} // namespace recv
} // namespace spead
} // namespace gr
