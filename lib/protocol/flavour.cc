/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/spead/flavour.h>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

flavour::flavour(int heap_address_bits, bool pyspead_descriptor_widths)
    : flavour(heap_address_bits, pyspead_descriptor_widths, pyspead_descriptor_widths)
{
}

flavour::flavour(int heap_address_bits, bool pyspead_descriptor_widths, bool shape_bit_1)
    : d_heap_address_bits(heap_address_bits),
      d_pyspead_descriptor_widths(pyspead_descriptor_widths),
      d_shape_bit_1(shape_bit_1)
{
    if (heap_address_bits < 8 || heap_address_bits > 56 || heap_address_bits % 8 != 0)
        throw std::invalid_argument(
            "flavour: heap_address_bits " + std::to_string(heap_address_bits) +
            " is not supported; use a multiple of 8 from 8 to 56 (40 for SPEAD-64-40, "
            "48 for SPEAD-64-48)");
}

flavour flavour::from_string(const std::string& name)
{
    std::string s = name;
    for (const char* prefix : { "SPEAD-", "spead-" })
        if (s.rfind(prefix, 0) == 0)
            s = s.substr(6);
    if (s.rfind("64-", 0) == 0)
        s = s.substr(3);
    std::size_t used = 0;
    int bits = -1;
    try {
        bits = std::stoi(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != s.size())
        throw std::invalid_argument("flavour: '" + name +
                                    "' is not a SPEAD flavour; write 64-40 or 64-48");
    return flavour(bits);
}

std::string flavour::name() const
{
    return "SPEAD-64-" + std::to_string(d_heap_address_bits);
}

} // namespace spead
} // namespace gr
