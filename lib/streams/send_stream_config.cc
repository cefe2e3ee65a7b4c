/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Validation of a send stream's settings (stream_config).

#include "protocol/packetiser.h"
#include <gnuradio/spead/send_stream_config.h>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace send {

namespace {
/*! Largest SPEAD packet that fits one IPv4 UDP datagram (65535 - 20 - 8). */
constexpr std::size_t max_udp_payload = 65507;
} // namespace

stream_config& stream_config::set_max_message_size(std::size_t bytes)
{
    constexpr std::size_t max_message = std::size_t(1) << 30;
    if (bytes <= max_udp_payload)
        return set_max_packet_size(bytes);
    if (bytes > max_message)
        throw std::invalid_argument("max_packet_size: " + std::to_string(bytes) +
                                    " bytes is out of range; use at most " +
                                    std::to_string(max_message) + " (1 GiB)");
    d_max_packet_size = bytes;
    return *this;
}

stream_config& stream_config::set_max_packet_size(std::size_t bytes)
{
    // The packetiser needs its prefix, one item pointer and 8 payload bytes.
    constexpr std::size_t min_size = packet_generator::prefix_size + 16;
    if (bytes < min_size || bytes > max_udp_payload)
        throw std::invalid_argument(
            "max_packet_size: " + std::to_string(bytes) + " bytes is out of range; use " +
            std::to_string(min_size) + " to " + std::to_string(max_udp_payload) +
            " (the UDP payload: 1472 for a 1500-byte MTU, 8972 for 9000)");
    d_max_packet_size = bytes;
    return *this;
}

stream_config& stream_config::set_rate(double bytes_per_second)
{
    if (!std::isfinite(bytes_per_second) || bytes_per_second < 0)
        throw std::invalid_argument("rate: " + std::to_string(bytes_per_second) +
                                    " is not a rate; give bytes per second >= 0 "
                                    "(0 sends as fast as possible)");
    d_rate = bytes_per_second;
    return *this;
}

stream_config& stream_config::set_burst_size(std::size_t bytes)
{
    if (bytes == 0)
        throw std::invalid_argument(
            "burst_size: must be at least 1 byte (bytes sent back-to-back before the "
            "rate limiter waits; default 65536)");
    d_burst_size = bytes;
    return *this;
}

stream_config& stream_config::set_burst_rate_ratio(double ratio)
{
    if (!std::isfinite(ratio) || ratio < 1.0)
        throw std::invalid_argument(
            "burst_rate_ratio: " + std::to_string(ratio) +
            " is below 1; give the catch-up rate relative to rate, 1 or more (1: "
            "never faster than rate; default 1.05, as spead2)");
    d_burst_rate_ratio = ratio;
    return *this;
}

stream_config& stream_config::set_max_heaps(std::size_t n)
{
    if (n == 0)
        throw std::invalid_argument(
            "max_heaps: must be at least 1 (heaps waiting in the send queue; default 4)");
    d_max_heaps = n;
    return *this;
}

stream_config& stream_config::set_inline_completions(bool inline_completions)
{
    d_inline_completions = inline_completions;
    return *this;
}

} // namespace send
} // namespace spead
} // namespace gr
