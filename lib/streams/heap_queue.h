/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_HEAP_QUEUE_H
#define INCLUDED_SPEAD_STREAMS_HEAP_QUEUE_H

#include "ring_fifo.h"
#include <gnuradio/spead/recv_heap.h>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Completed heaps waiting for the consumer (stream_config::set_queue_heaps()
 * bounds it). The stream's mutex guards it; a full queue drops the newest heap
 * (heap_placement::enqueue()), see docs/dev-recv-locking.md.
 */
using heap_queue = ring_fifo<heap>;

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_HEAP_QUEUE_H */
