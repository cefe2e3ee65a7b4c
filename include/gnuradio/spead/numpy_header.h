/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_NUMPY_HEADER_H
#define INCLUDED_SPEAD_NUMPY_HEADER_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! What a numpy header says about the item's element type. */
struct SPEAD_API numpy_dtype {
    std::string descr;        //!< e.g. ">u4", "<c8", "|u1"
    char byte_order = '|';    //!< '<' little, '>' big, '|' not applicable
    char kind = 'u';          //!< numpy kind: 'b','i','u','f','c'
    std::size_t itemsize = 0; //!< bytes per element
    bool fortran_order = false;
    std::vector<std::int64_t> shape;

    /*! True when elements are multi-byte and stored opposite to this host's order. */
    bool needs_byteswap() const;
};

/*!
 * \brief Parses the dict that spead2/PySPEAD put in the DTYPE field.
 * \return std::nullopt unless 'descr' names a simple scalar type.
 */
SPEAD_API std::optional<numpy_dtype> parse_numpy_header(const std::string& header);

/*!
 * \brief Writes a numpy header in the key order spead2's C++ tools use:
 * "{'shape': (N,), 'fortran_order': False, 'descr': '>u4'}".
 * \throws std::invalid_argument for an empty or quoted descr or a negative dimension.
 */
SPEAD_API std::string make_numpy_header(const std::string& descr,
                                        const std::vector<std::int64_t>& shape,
                                        bool fortran_order = false);

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_NUMPY_HEADER_H */
