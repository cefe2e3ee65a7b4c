/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_SOURCE_OPTIONS_H
#define INCLUDED_SPEAD_MAPPING_SOURCE_OPTIONS_H

#include "mapping/option_rules.h"
#include <gnuradio/spead/source_config.h>
#include <vector>

namespace gr {
namespace spead {

/*! spead.source's options: the one list every face is made from (GRC's fields, the
 * Python keywords, docs/usage.md's table), each applied to the config that owns it. */
SPEAD_API const std::vector<option_rule<source_config>>& source_option_rules();

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_SOURCE_OPTIONS_H */
