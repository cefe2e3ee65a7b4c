/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Test helper: writes SPEAD packets byte by byte, independently of the product's
// packetiser, so tests can also build packets that no correct sender would.

#ifndef INCLUDED_SPEAD_TESTS_PACKET_BUILDER_H
#define INCLUDED_SPEAD_TESTS_PACKET_BUILDER_H

#include <cstdint>
#include <vector>

namespace spead_test {

struct pointer {
    bool immediate;
    std::uint64_t id;
    std::uint64_t value;
};

inline void put_be64(std::vector<std::uint8_t>& out, std::uint64_t v)
{
    for (int i = 7; i >= 0; i--)
        out.push_back(std::uint8_t(v >> (8 * i)));
}

/*! A packet with exactly the given pointers (no specials added) and payload. */
inline std::vector<std::uint8_t> raw_packet(const std::vector<pointer>& pointers,
                                            const std::vector<std::uint8_t>& payload,
                                            int address_bits = 40)
{
    std::vector<std::uint8_t> out = {
        0x53, 0x04, std::uint8_t(8 - address_bits / 8), std::uint8_t(address_bits / 8),
        0,    0,    std::uint8_t(pointers.size() >> 8), std::uint8_t(pointers.size())
    };
    const std::uint64_t mask = (std::uint64_t(1) << address_bits) - 1;
    for (const pointer& p : pointers)
        put_be64(out,
                 (std::uint64_t(p.immediate) << 63) | (p.id << address_bits) |
                     (p.value & mask));
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

/*! A well-formed packet of heap \p cnt: HEAP_CNT, HEAP_SIZE (unless heap_size < 0),
 * HEAP_OFFSET, PAYLOAD_LENGTH, then \p items, then the payload. */
inline std::vector<std::uint8_t> packet(std::uint64_t cnt,
                                        std::int64_t heap_size,
                                        std::uint64_t offset,
                                        const std::vector<std::uint8_t>& payload,
                                        const std::vector<pointer>& items = {},
                                        int address_bits = 40)
{
    std::vector<pointer> pointers = { { true, 0x01, cnt } };
    if (heap_size >= 0)
        pointers.push_back({ true, 0x02, std::uint64_t(heap_size) });
    pointers.push_back({ true, 0x03, offset });
    pointers.push_back({ true, 0x04, payload.size() });
    pointers.insert(pointers.end(), items.begin(), items.end());
    return raw_packet(pointers, payload, address_bits);
}

/*! n bytes counting up from \p first (wrapping), so misplaced bytes are visible. */
inline std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t first = 0)
{
    std::vector<std::uint8_t> out(n);
    for (std::size_t i = 0; i < n; i++)
        out[i] = std::uint8_t(first + i);
    return out;
}

} // namespace spead_test

#endif
