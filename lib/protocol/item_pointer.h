/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_ITEM_POINTER_H
#define INCLUDED_SPEAD_PROTOCOL_ITEM_POINTER_H

#include <gnuradio/spead/api.h>
#include <cstdint>

namespace gr {
namespace spead {

/*!
 * \brief Packs and unpacks 64-bit item pointers for one heap address width:
 * bit 63 immediate flag, then the item id, then heap_address_bits of address/value.
 */
class SPEAD_API item_pointer_codec
{
public:
    explicit item_pointer_codec(int heap_address_bits)
        : d_address_bits(heap_address_bits),
          d_address_mask((std::uint64_t(1) << heap_address_bits) - 1)
    {
    }

    static bool is_immediate(std::uint64_t pointer) { return pointer >> 63; }
    std::uint64_t id(std::uint64_t pointer) const
    {
        return (pointer & ~immediate_flag) >> d_address_bits;
    }
    std::uint64_t value(std::uint64_t pointer) const { return pointer & d_address_mask; }

    std::uint64_t encode_immediate(std::uint64_t id, std::uint64_t value) const
    {
        return immediate_flag | (id << d_address_bits) | (value & d_address_mask);
    }
    std::uint64_t encode_address(std::uint64_t id, std::uint64_t address) const
    {
        return (id << d_address_bits) | (address & d_address_mask);
    }

    int address_bits() const { return d_address_bits; }
    std::uint64_t address_mask() const { return d_address_mask; }

    static constexpr std::uint64_t immediate_flag = std::uint64_t(1) << 63;

private:
    int d_address_bits;
    std::uint64_t d_address_mask;
};

} // namespace spead
} // namespace gr

#endif
