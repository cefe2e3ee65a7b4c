/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_BLOCK_MESSAGES_H
#define INCLUDED_SPEAD_BLOCK_MESSAGES_H

/* What the blocks put on (and take from) message ports and tags, in one place so the
 * source and the sink agree. */

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/descriptor.h>
#include <pmt/pmt.h>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace gr {
namespace spead {

/*! Tag key of an item without a descriptor name: "0x1600". */
SPEAD_API std::string item_id_tag_name(std::uint64_t id);

/*! Reads a "0x1600"-style tag key. */
SPEAD_API std::optional<std::uint64_t> parse_item_id_tag_name(const std::string& key);

/*!
 * A descriptor as a dict: id (uint64), name, description, numpy_header (strings as
 * symbols), format (a vector of (code, bits) pairs), shape (a vector of integers, -1 =
 * variable) and, when the numpy header is understood, dtype (e.g. ">u4").
 */
SPEAD_API pmt::pmt_t descriptor_to_pmt(const descriptor& d);

/*! The reverse of descriptor_to_pmt. \throws std::invalid_argument saying what is
 * wrong with the dict. */
SPEAD_API descriptor descriptor_from_pmt(const pmt::pmt_t& msg);

/*! Counters as a dict name -> uint64. */
SPEAD_API pmt::pmt_t stats_to_pmt(const std::map<std::string, std::uint64_t>& stats);

/*! The integer value of a tag (long or uint64), if it is one. */
SPEAD_API std::optional<std::uint64_t> pmt_to_uint64(const pmt::pmt_t& value);

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_BLOCK_MESSAGES_H */
