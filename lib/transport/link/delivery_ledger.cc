/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "delivery_ledger.h"
#include <algorithm>

namespace gr {
namespace spead {
namespace link {

void delivery_ledger::written(const send::packet* packets, std::size_t n)
{
    if (n == 0)
        return;
    if (d_written + n - d_settled > d_ends.size()) {
        std::size_t size = d_ends.size();
        while (d_written + n - d_settled > size)
            size *= 2;
        std::vector<std::uint64_t> ends(size);
        for (std::uint64_t k = d_settled; k < d_written; k++)
            ends[k & (size - 1)] = d_ends[k & (d_ends.size() - 1)];
        d_ends.swap(ends);
    }
    if (d_settled == d_written)
        d_progress = std::chrono::steady_clock::now(); // the wait for it starts now
    const std::uint64_t mask = d_ends.size() - 1;
    for (std::size_t i = 0; i < n; i++) {
        d_link_bytes += packets[i].size;
        d_ends[d_written & mask] = d_link_bytes;
        d_written++;
    }
}

bool delivery_ledger::acknowledged(std::uint64_t unacknowledged)
{
    const std::uint64_t acked = d_link_bytes - std::min(d_link_bytes, unacknowledged);
    const std::uint64_t mask = d_ends.size() - 1;
    const std::uint64_t before = d_settled;
    while (d_settled < d_written && d_ends[d_settled & mask] <= acked)
        d_settled++;
    if (d_reported >= d_lost_upto)
        d_ok_upto = d_settled;
    if (d_settled == before)
        return false;
    d_progress = std::chrono::steady_clock::now();
    return true;
}

void delivery_ledger::connection_lost(const boost::system::error_code& ec)
{
    // With an earlier loss not yet reported (two losses within one completion pass,
    // rare), what came between is counted lost with it: reports keep packet order.
    if (d_reported >= d_lost_upto)
        d_ok_upto = d_settled;
    d_settled = d_lost_upto = d_written;
    d_lost_ec = ec;
    d_link_bytes = 0;
}

std::uint64_t delivery_ledger::report(boost::system::error_code& ec,
                                      std::uint64_t written)
{
    if (d_reported < d_lost_upto) {
        if (d_reported < d_ok_upto) {
            d_reported = d_ok_upto; // acknowledged before the loss: sent
        } else {
            ec = d_lost_ec;
            d_reported = d_lost_upto;
            d_ok_upto = d_settled; // the next connection's, reported from now on
        }
    } else {
        d_reported = d_ok_upto;
    }
    return std::min(d_reported, written);
}

} // namespace link
} // namespace spead
} // namespace gr
