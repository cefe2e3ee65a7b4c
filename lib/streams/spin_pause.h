/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_SPIN_PAUSE_H
#define INCLUDED_SPEAD_STREAMS_SPIN_PAUSE_H

namespace gr {
namespace spead {

/*! A pause in a spin loop: the core lets its sibling run and does not flood the
 * cache line it polls. Spinning with sched_yield instead hands the core to any
 * runnable thread for a whole time slice. */
inline void spin_pause()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

} // namespace spead
} // namespace gr

#endif
