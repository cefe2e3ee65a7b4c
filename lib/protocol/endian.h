/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_ENDIAN_H
#define INCLUDED_SPEAD_PROTOCOL_ENDIAN_H

#include <cstdint>
#include <cstring>

namespace gr {
namespace spead {

/* SPEAD is big-endian throughout. memcpy keeps unaligned loads legal; compilers turn
 * these into a single load + bswap. */
inline std::uint64_t byte_swap(std::uint64_t v) { return __builtin_bswap64(v); }
inline std::uint32_t byte_swap(std::uint32_t v) { return __builtin_bswap32(v); }

/*! T (std::uint32_t or std::uint64_t) from its big-endian bytes. */
template <typename T>
inline T load_be(const std::uint8_t* p)
{
    T v;
    std::memcpy(&v, p, sizeof(v));
    return byte_swap(v);
}

template <typename T>
inline void store_be(std::uint8_t* p, T v)
{
    v = byte_swap(v);
    std::memcpy(p, &v, sizeof(v));
}

inline std::uint64_t load_be64(const std::uint8_t* p)
{
    return load_be<std::uint64_t>(p);
}
inline void store_be64(std::uint8_t* p, std::uint64_t v) { store_be(p, v); }
inline std::uint32_t load_be32(const std::uint8_t* p)
{
    return load_be<std::uint32_t>(p);
}
inline void store_be32(std::uint8_t* p, std::uint32_t v) { store_be(p, v); }

inline std::uint16_t load_be16(const std::uint8_t* p)
{
    return std::uint16_t((p[0] << 8) | p[1]);
}

inline void store_be16(std::uint8_t* p, std::uint16_t v)
{
    p[0] = std::uint8_t(v >> 8);
    p[1] = std::uint8_t(v);
}

/*! Stores the low \p len bytes of \p value big-endian (len 0..8). */
inline void store_be_bytes(std::uint8_t* p, int len, std::uint64_t value)
{
    for (int i = len - 1; i >= 0; i--) {
        p[i] = std::uint8_t(value);
        value >>= 8;
    }
}

/*! Reads \p len (0..8) big-endian bytes. */
inline std::uint64_t load_be_bytes(const std::uint8_t* p, int len)
{
    std::uint64_t v = 0;
    for (int i = 0; i < len; i++)
        v = (v << 8) | p[i];
    return v;
}

} // namespace spead
} // namespace gr

#endif
