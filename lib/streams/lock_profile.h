/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_LOCK_PROFILE_H
#define INCLUDED_SPEAD_STREAMS_LOCK_PROFILE_H

#include "spin_then_lock.h"
#include <cstddef>
#include <mutex>

#ifdef GR_SPEAD_LOCK_PROFILE
#include <chrono>
#include <cstdint>
#include <cstdio>
#endif

namespace gr {
namespace spead {
namespace recv {

#ifdef GR_SPEAD_LOCK_PROFILE
/*!
 * \brief How the readers of a continuous stream use its lock (chunk_placement):
 * acquisitions, how many found it held, the time spent waiting for it and holding it,
 * and the packets and copy tickets placed per hold; written to stderr when the stream
 * goes. A measuring build only: configure with
 * -DCMAKE_CXX_FLAGS=-DGR_SPEAD_LOCK_PROFILE (docs/dev-recv-locking.md). Its counters
 * change only with the lock held.
 */
class lock_profile
{
public:
    ~lock_profile()
    {
        if (d_acquired == 0)
            return;
        const double n = double(d_acquired);
        std::fprintf(stderr,
                     "lock profile: %llu acquisitions, %.1f%% found it held; wait %.3f s "
                     "(%.3f us each), hold %.3f s (%.3f us each); %.1f packets and %.2f "
                     "copy tickets per hold\n",
                     static_cast<unsigned long long>(d_acquired),
                     100.0 * double(d_contended) / n,
                     d_wait_ns * 1e-9,
                     d_wait_ns * 1e-3 / n,
                     d_hold_ns * 1e-9,
                     d_hold_ns * 1e-3 / n,
                     double(d_packets) / n,
                     double(d_tickets) / n);
    }
    /*! Takes \p lock (not held), timing the wait. */
    void acquire(std::unique_lock<std::mutex>& lock)
    {
        const auto asked = clock::now();
        if (!lock.try_lock()) {
            spin_then_lock(lock);
            d_contended++;
        }
        d_since = clock::now();
        d_acquired++;
        d_wait_ns += double((d_since - asked).count());
    }
    /*! About to release the lock: the hold ends. */
    void release() { d_hold_ns += double((clock::now() - d_since).count()); }
    void placed(std::size_t packets, std::size_t tickets)
    {
        d_packets += packets;
        d_tickets += tickets;
    }

private:
    using clock = std::chrono::steady_clock;
    clock::time_point d_since;
    std::uint64_t d_acquired = 0, d_contended = 0, d_packets = 0, d_tickets = 0;
    double d_wait_ns = 0, d_hold_ns = 0;
};
#else
/*! The normal build's lock_profile: takes the lock (spin_then_lock()), counts
 * nothing. */
class lock_profile
{
public:
    void acquire(std::unique_lock<std::mutex>& lock) { spin_then_lock(lock); }
    void release() {}
    void placed(std::size_t, std::size_t) {}
};
#endif

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_LOCK_PROFILE_H */
