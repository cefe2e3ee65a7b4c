/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_CNT_INDEX_H
#define INCLUDED_SPEAD_PROTOCOL_CNT_INDEX_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief The live heaps of an assembler by heap cnt: cnt -> the slot that holds it.
 *
 * Open addressing with linear probing in a table at most half full, so a lookup is a
 * hash and a probe or two however many heaps are live (a chunk assembler's window
 * holds thousands). Both assemblers find a packet's heap with it once the heap the last
 * packet went to is not it. Nothing is allocated after construction.
 */
class SPEAD_API cnt_index
{
public:
    static constexpr std::size_t none = ~std::size_t(0);

    /*! Room for \p slots live heaps, slots numbered [0, slots). */
    explicit cnt_index(std::size_t slots);

    /*! The slot of live heap \p cnt, or none. Adds the entries compared to \p probes. */
    std::size_t find(std::uint64_t cnt, std::uint64_t& probes) const
    {
        const std::size_t mask = d_table.size() - 1;
        for (std::size_t i = home(cnt);; i = (i + 1) & mask) {
            const entry& e = d_table[i];
            if (e.slot == 0)
                return none;
            probes++;
            if (e.cnt == cnt)
                return e.slot - 1;
        }
    }
    std::size_t find(std::uint64_t cnt) const
    {
        std::uint64_t probes = 0;
        return find(cnt, probes);
    }
    /*! Heap \p cnt is live in \p slot (no live heap has that cnt yet). */
    void insert(std::uint64_t cnt, std::size_t slot);
    /*! Heap \p cnt left \p slot (it was inserted there). */
    void erase(std::uint64_t cnt, std::size_t slot);
    /*! Forgets every heap. */
    void clear();

private:
    struct entry {
        std::uint64_t cnt = 0;
        std::size_t slot = 0; //!< slot + 1; 0: empty
    };
    std::size_t home(std::uint64_t cnt) const
    {
        return std::size_t((cnt * 0x9e3779b97f4a7c15ULL) >> d_shift);
    }

    std::vector<entry> d_table;
    unsigned d_shift = 0;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_CNT_INDEX_H */
