/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rdma_credits.h"

namespace gr {
namespace spead {
namespace rdma {

bool send_credits::never_fits(std::size_t length) const
{
    return length > d_grant.slot_size && length > d_grant.ring_size;
}

send_credits::choice send_credits::choose(std::size_t length) const
{
    choice c;
    if (d_sent - d_released.messages >= d_grant.recv_slots)
        return c; // no posted receive: sending now would meet RNR
    const std::uint64_t size = d_grant.ring_size;
    if (size > 0 && length > 0 && length <= size &&
        d_ring_sent - d_released.ring_messages < d_grant.rdma_depth) {
        const std::uint64_t used = d_ring_head - d_released.ring_bytes;
        const std::uint64_t at = d_ring_head % size;
        const std::uint64_t padding = at + length > size ? size - at : 0;
        if (used + padding + length <= size) {
            c.path = path::rdma_write;
            c.offset = std::uint32_t(padding ? 0 : at);
            c.padding = std::uint32_t(padding);
            return c;
        }
    }
    if (length <= d_grant.slot_size)
        c.path = path::send_recv;
    return c;
}

void send_credits::commit(const choice& c, std::size_t length)
{
    d_sent++;
    if (c.path == path::rdma_write) {
        d_ring_sent++;
        d_ring_head += c.padding + length;
    }
}

bool send_credits::update(const released& r)
{
    if (r.messages < d_released.messages || r.messages > d_sent ||
        r.ring_messages < d_released.ring_messages || r.ring_messages > d_ring_sent ||
        r.ring_bytes < d_released.ring_bytes || r.ring_bytes > d_ring_head)
        return false;
    d_released = r;
    return true;
}

bool ring_tracker::arrived(std::uint32_t offset, std::uint32_t length)
{
    if (d_count == max_pending || length == 0 || d_size == 0)
        return false;
    const std::uint64_t at = d_head % d_size;
    std::uint64_t padding = 0;
    if (offset != at) {
        // Only a wrap may skip bytes: to 0, because the write did not fit the tail.
        if (offset != 0 || at + length <= d_size)
            return false;
        padding = d_size - at;
    }
    if (std::uint64_t(offset) + length > d_size)
        return false;
    const std::uint64_t end = d_head + padding + length;
    if (end - d_released_bytes > d_size)
        return false; // it overwrote bytes not yet released
    d_head = end;
    d_ends[(d_first + d_count) % max_pending] = end;
    d_count++;
    return true;
}

void ring_tracker::release_oldest()
{
    if (d_count == 0)
        return;
    d_released_bytes = d_ends[d_first];
    d_first = (d_first + 1) % max_pending;
    d_count--;
    d_released_writes++;
}

} // namespace rdma
} // namespace spead
} // namespace gr
