/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TEST_RECONCILE_H
#define INCLUDED_SPEAD_TEST_RECONCILE_H

#include <gnuradio/spead/stats.h>
#include <gtest/gtest.h>
#include <cstdint>
#include <string>

namespace spead_test {

/*!
 * Whether \p sent packets reconcile with a kernel-UDP receiver's counters: every packet
 * was received (`packets`, or \p other counters the caller names) or dropped by the
 * kernel. Datagrams dropped one by one are counted exactly. A run the kernel dropped
 * from a coalescing socket (runs_dropped_socket_overflow) held 1 to 64 datagrams: with
 * such runs the identity holds within those bounds.
 */
inline ::testing::AssertionResult packets_reconcile(std::uint64_t sent,
                                                    const gr::spead::recv_stats& r,
                                                    std::uint64_t other = 0)
{
    using gr::spead::recv_stat;
    const std::uint64_t singles =
        r[recv_stat::packets] + other + r[recv_stat::packets_dropped_socket_overflow];
    const std::uint64_t runs = r[recv_stat::runs_dropped_socket_overflow];
    const std::string counted =
        std::to_string(r[recv_stat::packets]) + " received, " + std::to_string(other) +
        " otherwise counted, " +
        std::to_string(r[recv_stat::packets_dropped_socket_overflow]) + " dropped, " +
        std::to_string(runs) + " runs dropped";
    if (singles + runs <= sent && sent <= singles + 64 * runs)
        return ::testing::AssertionSuccess() << counted;
    return ::testing::AssertionFailure()
           << std::to_string(sent) << " packets sent do not reconcile: " << counted;
}

} // namespace spead_test

#endif /* INCLUDED_SPEAD_TEST_RECONCILE_H */
