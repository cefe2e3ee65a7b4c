/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/type_check.h"
#include <gnuradio/spead/numpy_header.h>

namespace gr {
namespace spead {

namespace {

/*! A number as the wire has it: floating point or integer, and its bytes. */
struct component {
    bool floating = false;
    std::size_t bytes = 0;
    std::string said; //!< as the descriptor writes it, e.g. "<c8", "f32"
    bool complex = false;
};

/*! The component a descriptor gives its elements, if it gives one (bytes 0: not). */
component component_of(const descriptor& d)
{
    component c;
    if (!d.numpy_header.empty()) {
        const auto dtype = parse_numpy_header(d.numpy_header);
        if (!dtype || dtype->shape.empty())
            return c; // unknown, or a scalar: metadata
        c.said = dtype->descr;
        if (dtype->kind == 'c') {
            c.floating = true;
            c.complex = true;
            c.bytes = dtype->itemsize / 2;
        } else if (dtype->kind == 'f' || dtype->kind == 'i' || dtype->kind == 'u') {
            c.floating = dtype->kind == 'f';
            c.bytes = dtype->itemsize;
        }
        return c;
    }
    // SPEAD format: a uniform list of fields of one kind and width.
    if (d.format.empty() || d.shape.empty())
        return c;
    const auto first = d.format.front();
    for (const auto& field : d.format)
        if (field != first)
            return c;
    if ((first.first != 'f' && first.first != 'i' && first.first != 'u') ||
        first.second % 8 != 0)
        return c;
    c.floating = first.first == 'f';
    c.bytes = static_cast<std::size_t>(first.second / 8) * d.format.size();
    c.said = first.first + std::to_string(first.second);
    if (d.format.size() != 1) {
        c.complex = d.format.size() == 2;
        c.bytes = static_cast<std::size_t>(first.second / 8);
    }
    return c;
}

/*! The block's item_type for elements of \p c. */
std::string type_for(const component& c)
{
    if (c.floating)
        return c.bytes == 4 ? (c.complex ? "complex_float" : "float") : "";
    switch (c.bytes) {
    case 1:
        return c.complex ? "complex_int8" : "int8";
    case 2:
        return c.complex ? "complex_int16" : "int16";
    case 4:
        return c.complex ? "" : "int32";
    default:
        return "";
    }
}

} // namespace

std::string type_contradiction(const item_type& type, const descriptor& d)
{
    const component wire = component_of(d);
    if (wire.bytes == 0)
        return "";
    // complex_float's components are floats; the others' integers.
    const bool floating = type.name() == "complex_float" || type.name() == "float";
    if (wire.floating == floating && wire.bytes == type.component_size())
        return "";
    const std::string fits = type_for(wire);
    return "the descriptor of item " + item_id_tag_name(d.id) +
           (d.name.empty() ? std::string() : " '" + d.name + "'") + " says " + wire.said +
           ", but item_type is " + type.name() + ": its bytes are output read as " +
           type.name() + ". " +
           (fits.empty() ? std::string("No item_type fits ") + wire.said +
                               "; convert at the sender"
                         : "Set item_type=" + fits);
}

} // namespace spead
} // namespace gr
