/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_RECENT_HEAPS_H
#define INCLUDED_SPEAD_PROTOCOL_RECENT_HEAPS_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief A ring of the heaps that recently left an assembler's window, by heap cnt (and
 * a key: a chunk assembler's timestamp, since a restarted sender may reuse cnts), with
 * how each left (\p Fate, the assembler's own enum). A later packet of such a heap is
 * counted by its fate (duplicate, late, ...) instead of starting the heap again.
 *
 * Both assemblers (heap_assembler, chunk_assembler) keep one. Heap cnts usually
 * increase, so a new heap is normally above every remembered one: find() answers that
 * case with one compare. Nothing is allocated after construction.
 */
template <typename Fate>
class recent_heaps
{
public:
    struct entry {
        std::uint64_t cnt;
        std::uint64_t key;
        Fate fate;
    };

    /*! Remembers the last \p capacity heaps (0: none). */
    explicit recent_heaps(std::size_t capacity) : d_entries(capacity) {}

    /*! Heap \p cnt (with \p key) left the window as \p fate; the oldest is forgotten
     * once the ring is full. */
    void remember(std::uint64_t cnt, Fate fate, std::uint64_t key = 0)
    {
        if (d_entries.empty())
            return;
        d_entries[d_next] = entry{ cnt, key, fate };
        if (++d_next == d_entries.size())
            d_next = 0;
        d_count = std::min(d_count + 1, d_entries.size());
        // An upper bound of the cnts remembered (an overwritten one may leave it high).
        d_max = d_count == 1 ? cnt : std::max(d_max, cnt);
    }

    /*! The heap with \p cnt and \p key, if it left recently; else nullptr. */
    const entry* find(std::uint64_t cnt, std::uint64_t key = 0) const
    {
        if (d_count == 0 || cnt > d_max)
            return nullptr;
        for (std::size_t i = 0; i < d_count; i++)
            if (d_entries[i].cnt == cnt && d_entries[i].key == key)
                return &d_entries[i];
        return nullptr;
    }

    /*! Forgets every heap (a stop or start heap, or a restart: cnts may be reused). */
    void forget()
    {
        d_count = 0;
        d_next = 0;
        d_max = 0;
    }

    std::size_t size() const { return d_count; }
    std::size_t capacity() const { return d_entries.size(); }

private:
    std::vector<entry> d_entries; //!< [0, d_count) are valid; d_next is overwritten next
    std::size_t d_next = 0;
    std::size_t d_count = 0;
    std::uint64_t d_max = 0;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_RECENT_HEAPS_H */
