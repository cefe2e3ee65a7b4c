/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Freezing a heap: its raw item pointers become the items a consumer reads (each
// addressed item's length, repeats dropped, immediates right-aligned), once, as the
// heap leaves the assembler.

#ifndef INCLUDED_SPEAD_PROTOCOL_HEAP_FREEZE_H
#define INCLUDED_SPEAD_PROTOCOL_HEAP_FREEZE_H

#include "heap_pool.h"
#include <gnuradio/spead/stats.h>

namespace gr {
namespace spead {
namespace recv {
namespace detail {

/*! Makes the heap's items from its raw pointers; an item addressed past the heap's
 * end is left out and counted in items_bad_address of \p stats. */
void freeze(heap_storage& h, recv_stats& stats);

/*! False if an addressed item starts past the heap's size (spead2: undecodable). */
bool addresses_fit(const heap_storage& h);

/*! Zeros the bytes of an incomplete heap that never arrived, up to its size. */
void zero_fill_gaps(heap_storage& h);

} // namespace detail
} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_HEAP_FREEZE_H */
