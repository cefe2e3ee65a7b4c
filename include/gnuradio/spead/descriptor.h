/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_DESCRIPTOR_H
#define INCLUDED_SPEAD_DESCRIPTOR_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/flavour.h>
#include <gnuradio/spead/numpy_header.h>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief Metadata describing an item: what the value of a DESCRIPTOR (0x05) item holds.
 *
 * The type is given either by \p format (SPEAD's (code, bits) list) or, as spead2 and
 * PySPEAD write it for numpy data, by \p numpy_header (a numpy .npy header dict, e.g.
 * "{'shape': (256,), 'fortran_order': False, 'descr': '>u4'}"), in which case format and
 * shape are usually empty.
 */
struct SPEAD_API descriptor {
    std::uint64_t id = 0;
    std::string name;
    std::string description;
    std::vector<std::pair<char, std::int64_t>> format; //!< (type code, bits)
    std::vector<std::int64_t> shape;                   //!< -1 marks a variable dimension
    std::string numpy_header;

    bool operator==(const descriptor& o) const
    {
        return id == o.id && name == o.name && description == o.description &&
               format == o.format && shape == o.shape && numpy_header == o.numpy_header;
    }
};

/*!
 * \brief Encodes a descriptor as a complete one-packet SPEAD heap, as spead2 does
 * (heap cnt 1; items DESCRIPTOR_ID, NAME, DESCRIPTION, FORMAT, SHAPE, and DTYPE when
 * a numpy header is set). Format fields take 9 - address bytes, shape fields
 * 1 + address bytes, or 4 and 8 with flavour::pyspead_descriptor_widths().
 * \throws std::invalid_argument if the id or a field does not fit the flavour.
 */
SPEAD_API std::vector<std::uint8_t> encode_descriptor(const descriptor& d,
                                                      const flavour& f);

/*!
 * \brief Decodes the value of a DESCRIPTOR item. The flavour is read from the embedded
 * packet; \p pyspead_widths selects PySPEAD's fixed field widths.
 * \return std::nullopt when the value is not a well-formed descriptor.
 */
SPEAD_API std::optional<descriptor> decode_descriptor(const std::uint8_t* data,
                                                      std::size_t size,
                                                      bool pyspead_widths = false);

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_DESCRIPTOR_H */
