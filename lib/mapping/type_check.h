/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_TYPE_CHECK_H
#define INCLUDED_SPEAD_MAPPING_TYPE_CHECK_H

/* Whether a sender's descriptor contradicts spead.source's item_type: the bytes then
 * reach the flowgraph read as another type (complex_float sent, complex_int16 read:
 * four times the items, all wrong), which no counter would otherwise show. */

#include "mapping/item_type.h"
#include <gnuradio/spead/descriptor.h>
#include <string>

namespace gr {
namespace spead {

/*!
 * What is wrong with reading the item \p d describes as \p type: empty when nothing
 * (the same kind of number, integer or floating point, of the same width), or when
 * \p d says too little to tell (no numpy header or uniform SPEAD format, or a scalar:
 * metadata, not a payload). Otherwise a sentence for a warning: what the descriptor
 * says, and the item_type to set when one fits.
 */
SPEAD_API std::string type_contradiction(const item_type& type, const descriptor& d);

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_TYPE_CHECK_H */
