/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_PAYLOAD_PATTERN_H
#define INCLUDED_SPEAD_APPS_PAYLOAD_PATTERN_H

// The payload pattern that `spead_send --verify` writes and `spead_recv --verify`
// checks. Every byte is a function of the heap cnt, the item index and the byte offset,
// so a byte that is lost, corrupted, moved within an item or carried over from another
// heap or item is detected:
//
//   item index  i = item id - 0x1000 (spead_send's items are 0x1000, 0x1001, ...)
//   seed        = splitmix64((cnt << 16) + i)          (all arithmetic modulo 2^64)
//   word k      = seed + k * 0x9e3779b97f4a7c15
//   bytes 8k .. 8k+7 of the item hold word k, little-endian; a last partial word keeps
//   its low bytes.
//
// splitmix64(x): x += 0x9e3779b97f4a7c15; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9;
//                x = (x ^ (x >> 27)) * 0x94d049bb133111eb; return x ^ (x >> 31).

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gr {
namespace spead {
namespace apps {

/*! Id of spead_send's first item; item i has id first_item_id + i. */
constexpr std::uint64_t first_item_id = 0x1000;
/*! Ids spead_recv --verify checks: first_item_id .. first_item_id + max_items - 1. */
constexpr std::uint64_t max_pattern_items = 0x10000;

constexpr std::uint64_t pattern_step = 0x9e3779b97f4a7c15ULL;

constexpr std::uint64_t pattern_seed(std::uint64_t cnt, std::uint64_t item_index)
{
    std::uint64_t x = (cnt << 16) + item_index + pattern_step;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

namespace detail {
inline void store_le(std::uint8_t* out, std::uint64_t v, std::size_t bytes)
{
    for (std::size_t b = 0; b < bytes; b++)
        out[b] = static_cast<std::uint8_t>(v >> (8 * b));
}
inline bool host_is_little_endian()
{
    const std::uint16_t one = 1;
    std::uint8_t first;
    std::memcpy(&first, &one, 1);
    return first == 1;
}
} // namespace detail

/*! Writes the pattern of item \p item_index of heap \p cnt into \p data. */
inline void fill_pattern(std::uint8_t* data,
                         std::size_t length,
                         std::uint64_t cnt,
                         std::uint64_t item_index)
{
    const std::uint64_t seed = pattern_seed(cnt, item_index);
    const std::size_t words = length / 8;
    if (detail::host_is_little_endian()) {
        // word-sized stores the compiler vectorises: this runs at memory speed
        for (std::size_t k = 0; k < words; k++) {
            const std::uint64_t v = seed + k * pattern_step;
            std::memcpy(data + 8 * k, &v, 8);
        }
    } else {
        for (std::size_t k = 0; k < words; k++)
            detail::store_le(data + 8 * k, seed + k * pattern_step, 8);
    }
    if (length % 8)
        detail::store_le(data + 8 * words, seed + words * pattern_step, length % 8);
}

/*! Bytes of \p data that differ from the pattern of item \p item_index of heap
 * \p cnt (0: the item is intact). */
inline std::size_t count_pattern_mismatches(const std::uint8_t* data,
                                            std::size_t length,
                                            std::uint64_t cnt,
                                            std::uint64_t item_index)
{
    const std::uint64_t seed = pattern_seed(cnt, item_index);
    std::size_t bad = 0;
    std::uint8_t expected[8];
    for (std::size_t offset = 0; offset < length; offset += 8) {
        const std::size_t n = length - offset < 8 ? length - offset : 8;
        detail::store_le(expected, seed + (offset / 8) * pattern_step, 8);
        if (std::memcmp(data + offset, expected, n) == 0)
            continue;
        for (std::size_t b = 0; b < n; b++)
            bad += data[offset + b] != expected[b];
    }
    return bad;
}

} // namespace apps
} // namespace spead
} // namespace gr

#endif
