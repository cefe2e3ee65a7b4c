/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_CONFIG_SETTER_H
#define INCLUDED_SPEAD_CONFIG_SETTER_H

namespace gr {
namespace spead {
namespace detail {

/*! The body of a config's setter that takes any value: stores \p value in \p field
 * and returns \p config, so that calls chain. */
template <typename Config, typename Field, typename Value>
Config& assign(Config& config, Field& field, const Value& value)
{
    field = value;
    return config;
}

} // namespace detail
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_CONFIG_SETTER_H */
