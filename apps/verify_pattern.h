/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_VERIFY_PATTERN_H
#define INCLUDED_SPEAD_APPS_VERIFY_PATTERN_H

// The payload of `--verify`, spead2's (spead2_send and spead2_recv v4.4.1), so that
// either tool checks the other's heaps:
//
//   items 0x1000, 0x1001, ... hold big-endian uint32 elements, E per item;
//   the values are one std::minstd_rand sequence (x <- 48271 x mod 2^31 - 1, from 1)
//   over the whole stream: heap cnt c starts at position E × n × (c - 1), where n is
//   the number of items the heap has as spead2's receiver counts them (every item but
//   padding and empty ones; spead2_send's data heaps have only the test items), and
//   continues item after item, in address order.
//
// spead2_recv exits at the first element that differs; spead_recv counts them and
// exits with status 1 at the end.

#include <gnuradio/spead/recv_heap.h>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace spead {
namespace apps {

/*! Id of the first test item; item i has id first_item_id + i. */
constexpr std::uint64_t first_item_id = 0x1000;

/*! std::minstd_rand: x <- a x mod m. */
constexpr std::uint64_t minstd_a = 48271;
constexpr std::uint64_t minstd_m = 2147483647;

/*! The value at \p position (0: the first) of the sequence: a^(position + 1) mod m. */
inline std::uint32_t pattern_value(std::uint64_t position)
{
    std::uint64_t result = 1, base = minstd_a, n = position + 1;
    while (n) {
        if (n & 1)
            result = result * base % minstd_m;
        base = base * base % minstd_m;
        n >>= 1;
    }
    return static_cast<std::uint32_t>(result);
}

/*! Writes \p elements big-endian values from \p position on into \p data. */
inline void fill_pattern(std::uint8_t* data, std::size_t elements, std::uint64_t position)
{
    std::uint64_t x = pattern_value(position);
    for (std::size_t k = 0; k < elements; k++, x = x * minstd_a % minstd_m) {
        data[4 * k] = std::uint8_t(x >> 24);
        data[4 * k + 1] = std::uint8_t(x >> 16);
        data[4 * k + 2] = std::uint8_t(x >> 8);
        data[4 * k + 3] = std::uint8_t(x);
    }
}

/*! What checking one received heap found. */
struct pattern_check {
    bool verifiable = false;          //!< it has test items
    bool inconsistent_length = false; //!< one is not as long as the first
    std::uint64_t bad_elements = 0;   //!< elements that differ
    // The first difference, as spead2_recv reports it:
    std::uint64_t item = 0;
    std::size_t offset = 0; //!< element index in the item
    std::uint32_t expected = 0, actual = 0;
};

/*! Checks \p h's test items against the pattern, as spead2_recv --verify does. */
inline pattern_check check_pattern(const recv::heap& h)
{
    // spead2's order and count: addressed items by address, then immediates by value;
    // padding (id 0) and empty items are not items.
    std::vector<const recv::item*> items;
    for (const recv::item& it : h.items())
        if (it.id != 0 && (it.is_immediate || it.length != 0))
            items.push_back(&it);
    std::stable_sort(
        items.begin(), items.end(), [](const recv::item* a, const recv::item* b) {
            if (a->is_immediate != b->is_immediate)
                return b->is_immediate;
            return a->is_immediate ? a->immediate_value < b->immediate_value
                                   : a->data < b->data;
        });
    pattern_check out;
    std::size_t elements = 0;
    std::uint64_t x = 0;
    for (const recv::item* it : items) {
        if (it->id < first_item_id)
            continue;
        if (!out.verifiable) {
            out.verifiable = true;
            elements = it->length / 4;
            x = pattern_value(elements * items.size() * (h.cnt() - 1));
        }
        if (it->length != elements * 4) {
            out.inconsistent_length = true;
            out.item = it->id;
            return out;
        }
        for (std::size_t k = 0; k < elements; k++, x = x * minstd_a % minstd_m) {
            const std::uint8_t* b = it->data + 4 * k;
            const std::uint32_t actual = std::uint32_t(b[0]) << 24 |
                                         std::uint32_t(b[1]) << 16 |
                                         std::uint32_t(b[2]) << 8 | b[3];
            if (actual == x)
                continue;
            if (out.bad_elements++ == 0) {
                out.item = it->id;
                out.offset = k;
                out.expected = std::uint32_t(x);
                out.actual = actual;
            }
        }
    }
    return out;
}

} // namespace apps
} // namespace spead
} // namespace gr

#endif
