/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_FLAVOUR_H
#define INCLUDED_SPEAD_FLAVOUR_H

#include <gnuradio/spead/api.h>
#include <cstdint>
#include <string>

namespace gr {
namespace spead {

/*!
 * \brief A SPEAD-64-XX flavour: 64-bit item pointers whose low XX bits hold a heap
 * address or an immediate value, the rest the immediate flag and the item id.
 *
 * On receive the flavour is taken from each packet's header (bytes 2 and 3), so one
 * stream may mix flavours; on send it is chosen per heap.
 */
class SPEAD_API flavour
{
public:
    /*!
     * \param heap_address_bits XX in SPEAD-64-XX: a multiple of 8 from 8 to 56
     *        (40 and 48 are the common ones). Default 40, as spead2.
     * \param pyspead_descriptor_widths encode and decode descriptor format and shape
     *        fields with PySPEAD's fixed widths (4 and 8 bytes) instead of widths
     *        derived from the flavour (spead2's BUG_COMPAT_DESCRIPTOR_WIDTHS).
     * Variable dimensions of descriptor shapes are then marked with bit 1, as PySPEAD
     * did (spead2's BUG_COMPAT_PYSPEAD_0_5_2 has both); otherwise with bit 0.
     * \throws std::invalid_argument for any other heap_address_bits.
     */
    explicit flavour(int heap_address_bits = 40, bool pyspead_descriptor_widths = false);
    /*! As above, with the shape flag chosen apart from the widths: \p shape_bit_1 marks
     * variable dimensions with bit 1 (spead2's BUG_COMPAT_SHAPE_BIT_1), else bit 0. */
    flavour(int heap_address_bits, bool pyspead_descriptor_widths, bool shape_bit_1);

    /*! Parses "64-40", "SPEAD-64-48" or "48". \throws std::invalid_argument */
    static flavour from_string(const std::string& name);

    int heap_address_bits() const { return d_heap_address_bits; }
    /*! Width of an immediate value in bytes (5 for 64-40, 6 for 64-48). */
    int heap_address_bytes() const { return d_heap_address_bits / 8; }
    /*! Bits for the item id (the top bit of the pointer is the immediate flag). */
    int item_id_bits() const { return 63 - d_heap_address_bits; }
    /*! Largest encodable item id. */
    std::uint64_t max_item_id() const { return (std::uint64_t(1) << item_id_bits()) - 1; }
    /*! Largest heap address or immediate value. */
    std::uint64_t max_address() const
    {
        return (std::uint64_t(1) << d_heap_address_bits) - 1;
    }
    bool pyspead_descriptor_widths() const { return d_pyspead_descriptor_widths; }
    /*! Variable dimensions of descriptor shapes are marked with bit 1 (not bit 0). */
    bool shape_bit_1() const { return d_shape_bit_1; }

    /*! "SPEAD-64-40" */
    std::string name() const;

    bool operator==(const flavour& other) const
    {
        return d_heap_address_bits == other.d_heap_address_bits &&
               d_pyspead_descriptor_widths == other.d_pyspead_descriptor_widths &&
               d_shape_bit_1 == other.d_shape_bit_1;
    }
    bool operator!=(const flavour& other) const { return !(*this == other); }

private:
    int d_heap_address_bits;
    bool d_pyspead_descriptor_widths;
    bool d_shape_bit_1;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_FLAVOUR_H */
