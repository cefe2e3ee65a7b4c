/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "framed_incoming.h"
#include "protocol/frame_decoder.h"
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace gr {
namespace spead {
namespace transport {

namespace {
/*! Smallest buffer: big reads keep system calls per byte low. */
constexpr std::size_t min_buffer = 256 * 1024;
} // namespace

framed_incoming::framed_incoming(std::size_t max_packet_size)
    : d_max_packet_size(max_packet_size),
      d_max_size(std::max(2 * max_packet_size, min_buffer)),
      d_size(min_buffer)
{
}

bool framed_incoming::make_room()
{
    // The bytes not yet given (the start of the next packet) to the front: the views
    // given before were released.
    if (d_head > 0) {
        std::memmove(d_buffer.get(), d_buffer.get() + d_head, d_tail - d_head);
        d_tail -= d_head;
        d_head = 0;
    }
    if (d_buffer && d_tail < d_size)
        return true;
    // Made at the first read, not at accept, and grown (doubling) only while one
    // packet fills it: memory follows what the peer actually sent.
    const std::size_t size = d_buffer ? std::min(2 * d_size, d_max_size) : d_size;
    std::unique_ptr<std::uint8_t[]> bigger(new (std::nothrow) std::uint8_t[size]);
    if (!bigger)
        return false;
    if (d_tail > 0)
        std::memcpy(bigger.get(), d_buffer.get(), d_tail);
    d_buffer = std::move(bigger);
    d_size = size;
    return true;
}

std::size_t framed_incoming::frame_packets(recv::packet_view* packets, std::size_t n)
{
    // Locals: the views written could alias the members as far as the compiler knows.
    const std::uint8_t* const buffer = d_buffer.get();
    const std::size_t tail = d_tail;
    std::size_t head = d_head;
    std::size_t got = 0;
    while (got < n) {
        const frame f = next_frame(buffer + head, tail - head, d_max_packet_size);
        if (f.status != frame_status::packet) {
            if (f.status == frame_status::garbage) {
                d_error = -EBADMSG;
            } else if (f.status == frame_status::too_large) {
                d_refused_size = f.size;
                d_error = -EMSGSIZE;
            }
            break;
        }
        packets[got++] = { buffer + head, f.size };
        head += f.size;
    }
    d_head = head;
    return got;
}

std::ptrdiff_t framed_incoming::receive(recv::packet_view* packets, std::size_t n)
{
    if (d_error != 0)
        return d_error;
    if (d_tail > d_head) {
        if (std::size_t got = frame_packets(packets, n))
            return std::ptrdiff_t(got);
        if (d_error != 0)
            return d_error;
    }
    // No whole packet left: read after the start of the next one.
    if (!make_room()) {
        d_error = -ENOMEM; // this connection ends; the others go on
        return d_error;
    }
    const std::ptrdiff_t r = read_bytes(d_buffer.get() + d_tail, d_size - d_tail);
    if (r <= 0)
        return r; // 0: closed (unfinished_bytes() says whether mid-packet), or -errno
    d_tail += std::size_t(r);
    if (std::size_t got = frame_packets(packets, n))
        return std::ptrdiff_t(got);
    return d_error != 0 ? d_error : -EAGAIN;
}

std::string framed_incoming::describe_ending(std::ptrdiff_t result) const
{
    if (result == -EBADMSG)
        return "it sent bytes that are not a SPEAD packet header (wrong magic, version "
               "or widths, or no PAYLOAD_LENGTH): is it a SPEAD sender, and does it "
               "frame "
               "packets as spead2 does?";
    if (result == -EMSGSIZE)
        return "it sent a packet of " + std::to_string(d_refused_size) +
               "+ bytes, above max_packet_size (" + std::to_string(d_max_packet_size) +
               "): raise max_packet_size to the sender's packet size";
    if (result == -ENOMEM)
        return "no memory for its buffer to grow beyond " + std::to_string(d_size) +
               " bytes (max_packet_size " + std::to_string(d_max_packet_size) +
               "): lower max_packet_size or max_connections, or give the process more "
               "memory";
    if (result == 0)
        return "the peer closed it in the middle of a packet (" +
               std::to_string(unfinished_bytes()) +
               " bytes of it discarded): the sender stopped abruptly";
    return link::incoming::describe_ending(result);
}

} // namespace transport
} // namespace spead
} // namespace gr
