/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_ITEM_ID_CHECKS_H
#define INCLUDED_SPEAD_MAPPING_ITEM_ID_CHECKS_H

/* Which item ids the blocks' options may name, in the words of their errors. */

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/flavour.h>
#include <cstdint>
#include <string>

namespace gr {
namespace spead {

/*! A source option's item id: 0 (none) or one that is not a protocol item and fits
 * 56 bits. \throws std::invalid_argument "OPTION: ID is a reserved or impossible
 * item id; use USE" */
SPEAD_API void
check_source_item_id(const std::string& option, std::uint64_t id, const std::string& use);

/*! A sink option's item id: above the reserved ones (0x15) and within \p f.
 * \throws std::invalid_argument naming \p option, with \p default_id in the fix */
SPEAD_API void check_sink_item_id(const std::string& option,
                                  std::uint64_t id,
                                  const flavour& f,
                                  const std::string& default_id);

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_ITEM_ID_CHECKS_H */
