/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_HEAP_QUEUE_H
#define INCLUDED_SPEAD_STREAMS_HEAP_QUEUE_H

#include <gnuradio/spead/recv_heap.h>
#include <cstddef>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Bounded FIFO of completed heaps waiting for the consumer.
 *
 * Slots are allocated as the queue first grows (a long queue that is never used costs
 * nothing) and kept, so queueing a heap allocates nothing in the steady state. Not
 * thread-safe: the stream's mutex guards it (see docs/dev-recv-locking.md).
 */
class heap_queue
{
public:
    /*! Holds up to \p capacity heaps. */
    explicit heap_queue(std::size_t capacity) : d_capacity(capacity) {}

    bool empty() const { return d_count == 0; }
    bool full() const { return d_count == d_capacity; }
    std::size_t size() const { return d_count; }
    std::size_t capacity() const { return d_capacity; }

    /*! Queues \p h; the caller has checked full(). */
    void push(heap&& h)
    {
        if (d_count == d_slots.size())
            grow();
        d_slots[(d_head + d_count) % d_slots.size()] = std::move(h);
        d_count++;
    }
    /*! The oldest heap; the caller has checked empty(). */
    heap pop()
    {
        heap out = std::move(d_slots[d_head]);
        d_head = (d_head + 1) % d_slots.size();
        d_count--;
        return out;
    }

private:
    /*! Doubles the slots (up to the capacity), the waiting heaps first in order. */
    void grow();

    std::size_t d_capacity;
    std::vector<heap> d_slots;
    std::size_t d_head = 0;
    std::size_t d_count = 0;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_HEAP_QUEUE_H */
