/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_CONTINUOUS_LAYOUT_H
#define INCLUDED_SPEAD_CONTINUOUS_LAYOUT_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

/*!
 * \brief How a time-continuous stream's heaps are laid out, the same for the side
 * that sends it (spead.sink input_mode continuous) and the side that receives it
 * (spead.source output_mode continuous, recv::continuous_config); see
 * docs/continuous.md.
 *
 * Every data heap carries its timestamp in the immediate \p timestamp_item and, with
 * several substreams, its substream's index in the immediate \p substream_item. The
 * heaps of one substream follow each other every \p timestamp_step; the substreams
 * advance together. A heap's payload is a whole number of items of \p item_bytes
 * bytes.
 */
struct continuous_layout {
    /*! Immediate item holding each data heap's timestamp (required: 0 names none). */
    std::uint64_t timestamp_item = 0;
    /*! Timestamp increase from one heap of a substream to the next; 0: the items per
     * heap (timestamps count items). */
    std::uint64_t timestamp_step = 0;
    /*! Substreams (the source's outputs, the sink's inputs) that advance together,
     * >= 1 (default 1). */
    std::size_t substreams = 1;
    /*! Immediate item naming a heap's substream; 0: every heap is substream 0
     * (required with several substreams). */
    std::uint64_t substream_item = 0;
    /*! Bytes of one item (item type × vlen), >= 1. */
    std::size_t item_bytes = 1;

    /*! Checks the fields above against each other.
     * \throws std::invalid_argument naming the field, the value and the fix */
    void validate_layout() const
    {
        const auto hex = [](std::uint64_t id) {
            char text[24];
            std::snprintf(text, sizeof text, "0x%llx", (unsigned long long)id);
            return std::string(text);
        };
        if (timestamp_item == 0)
            throw std::invalid_argument(
                "timestamp_item: 0 names no item; a continuous stream places each heap "
                "by the immediate item holding its timestamp: give its id (e.g. "
                "0x1600)");
        if (item_bytes == 0)
            throw std::invalid_argument("item_bytes: 0; give the bytes of one item");
        if (substreams == 0)
            throw std::invalid_argument(
                "substreams: 0; give the number of substreams, at least 1");
        if (substreams > 1 && substream_item == 0)
            throw std::invalid_argument(
                "substream_item: 0 with " + std::to_string(substreams) +
                " substreams; give the id of the immediate item that carries each "
                "heap's substream index (e.g. 0x1601), or use 1 substream");
        if (substream_item != 0 && substream_item == timestamp_item)
            throw std::invalid_argument("substream_item: " + hex(substream_item) +
                                        " is the timestamp item too; give each item "
                                        "its own id");
    }
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_CONTINUOUS_LAYOUT_H */
