/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_RING_FIFO_H
#define INCLUDED_SPEAD_STREAMS_RING_FIFO_H

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief A bounded FIFO in a ring of slots: the queues of a receive stream (heaps for
 * the consumer, chunks for the consumer) are made of it.
 *
 * Slots are allocated as the FIFO first grows (a long queue that is never used costs
 * nothing) and kept, so queueing allocates nothing in the steady state. Not
 * thread-safe: its owner's lock guards it.
 */
template <typename T>
class ring_fifo
{
public:
    /*! Holds up to \p capacity entries. */
    explicit ring_fifo(std::size_t capacity = 0) : d_capacity(capacity) {}

    bool empty() const { return d_count == 0; }
    bool full() const { return d_count == d_capacity; }
    std::size_t size() const { return d_count; }
    std::size_t capacity() const { return d_capacity; }

    /*! Queues \p v; the caller has checked full(). */
    void push(T&& v)
    {
        if (d_count == d_slots.size())
            grow();
        d_slots[(d_head + d_count) % d_slots.size()] = std::move(v);
        d_count++;
    }
    /*! The oldest entry, moved into \p out; the caller has checked empty(). */
    void pop_into(T& out)
    {
        out = std::move(d_slots[d_head]);
        d_head = (d_head + 1) % d_slots.size();
        d_count--;
    }
    /*! The newest entry; the caller has checked empty(). */
    T& back() { return d_slots[(d_head + d_count - 1) % d_slots.size()]; }

private:
    /*! Doubles the slots (up to the capacity), the waiting entries first in order. */
    void grow()
    {
        std::vector<T> slots(std::min(d_capacity, std::max<std::size_t>(8, 2 * d_count)));
        for (std::size_t i = 0; i < d_count; i++)
            slots[i] = std::move(d_slots[(d_head + i) % d_slots.size()]);
        d_slots = std::move(slots);
        d_head = 0;
    }

    std::size_t d_capacity;
    std::vector<T> d_slots;
    std::size_t d_head = 0;
    std::size_t d_count = 0;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_RING_FIFO_H */
