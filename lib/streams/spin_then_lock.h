/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_SPIN_THEN_LOCK_H
#define INCLUDED_SPEAD_STREAMS_SPIN_THEN_LOCK_H

#include "spin_pause.h"
#include <mutex>

namespace gr {
namespace spead {
namespace recv {

/*! Tries for the stream's lock this many times, a pause apart, before sleeping on it:
 * as many as glibc's adaptive mutexes try (glibc.pthread.mutex_spin_count). */
constexpr int lock_spins = 100;

/*!
 * Takes \p lock (not held), spinning briefly first. A reader holds the stream's lock
 * for about 0.2 us at a time; a std::mutex found held puts its caller to sleep at once,
 * and the sleep and the wake-up cost the waiter 6-7 us on average on a 2-vCPU VM, while
 * its core idles. Two readers on two cores lost a quarter of what a second core offers
 * to it (docs/performance.md, "Scaling with reader threads"). Spinning finds the lock
 * free within the holder's hold unless the holder lost its core; then the caller
 * sleeps as before.
 */
inline void spin_then_lock(std::unique_lock<std::mutex>& lock)
{
    for (int k = 0; k < lock_spins; k++) {
        if (lock.try_lock())
            return;
        spin_pause();
    }
    lock.lock();
}

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_SPIN_THEN_LOCK_H */
