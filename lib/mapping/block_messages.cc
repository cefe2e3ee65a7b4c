/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

std::string dict_string(const pmt::pmt_t& dict, const char* key)
{
    const pmt::pmt_t v = pmt::dict_ref(dict, pmt::mp(key), pmt::PMT_NIL);
    if (pmt::is_null(v))
        return std::string();
    if (pmt::is_symbol(v))
        return pmt::symbol_to_string(v);
    throw std::invalid_argument(std::string("descriptor message: '") + key +
                                "' must be a string (symbol)");
}

} // namespace

std::string item_id_tag_name(std::uint64_t id)
{
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(id));
    return buf;
}

std::optional<std::uint64_t> parse_item_id_tag_name(const std::string& key)
{
    if (key.size() < 3 || key.size() > 18 || key[0] != '0' ||
        (key[1] != 'x' && key[1] != 'X'))
        return std::nullopt;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(key.c_str() + 2, &end, 16);
    if (end != key.c_str() + key.size())
        return std::nullopt;
    return static_cast<std::uint64_t>(v);
}

pmt::pmt_t descriptor_to_pmt(const descriptor& d)
{
    pmt::pmt_t dict = pmt::make_dict();
    dict = pmt::dict_add(dict, pmt::mp("id"), pmt::from_uint64(d.id));
    dict = pmt::dict_add(dict, pmt::mp("name"), pmt::mp(d.name));
    dict = pmt::dict_add(dict, pmt::mp("description"), pmt::mp(d.description));
    pmt::pmt_t format = pmt::make_vector(d.format.size(), pmt::PMT_NIL);
    for (std::size_t i = 0; i < d.format.size(); i++)
        pmt::vector_set(format,
                        i,
                        pmt::cons(pmt::mp(std::string(1, d.format[i].first)),
                                  pmt::from_long(d.format[i].second)));
    dict = pmt::dict_add(dict, pmt::mp("format"), format);
    // A plain vector of integers (pmt.to_python cannot read an s64vector).
    pmt::pmt_t shape = pmt::make_vector(d.shape.size(), pmt::PMT_NIL);
    for (std::size_t i = 0; i < d.shape.size(); i++)
        pmt::vector_set(shape, i, pmt::from_long(static_cast<long>(d.shape[i])));
    dict = pmt::dict_add(dict, pmt::mp("shape"), shape);
    dict = pmt::dict_add(dict, pmt::mp("numpy_header"), pmt::mp(d.numpy_header));
    if (!d.numpy_header.empty()) {
        if (auto dtype = parse_numpy_header(d.numpy_header))
            dict = pmt::dict_add(dict, pmt::mp("dtype"), pmt::mp(dtype->descr));
    }
    return dict;
}

namespace {

/*! The elements of \p msg's field \p key, given as a PMT vector, list or tuple (none
 * when absent); anything else is refused, naming what the elements should be. */
std::vector<pmt::pmt_t>
sequence_field(const pmt::pmt_t& msg, const char* key, const char* elements)
{
    const pmt::pmt_t value = pmt::dict_ref(msg, pmt::mp(key), pmt::PMT_NIL);
    std::vector<pmt::pmt_t> out;
    if (pmt::is_vector(value)) {
        for (std::size_t i = 0; i < pmt::length(value); i++)
            out.push_back(pmt::vector_ref(value, i));
    } else if (pmt::is_tuple(value)) {
        for (std::size_t i = 0; i < pmt::length(value); i++)
            out.push_back(pmt::tuple_ref(value, i));
    } else if (pmt::is_null(value)) {
        // absent, or the empty list
    } else if (pmt::is_pair(value)) {
        pmt::pmt_t rest = value;
        for (; pmt::is_pair(rest); rest = pmt::cdr(rest))
            out.push_back(pmt::car(rest));
        if (!pmt::is_null(rest)) // (code . bits) alone: one pair, not a list of them
            out = { value };
    } else {
        throw std::invalid_argument(std::string("descriptor message: '") + key +
                                    "' must be a vector or list of " + elements +
                                    ", not " + pmt::write_string(value));
    }
    return out;
}

} // namespace

descriptor descriptor_from_pmt(const pmt::pmt_t& msg)
{
    if (!pmt::is_dict(msg) || pmt::is_null(msg))
        throw std::invalid_argument(
            "descriptor message: expected a dict with at least 'id' and 'name' (as "
            "spead.source emits on its descriptors port)");
    descriptor d;
    const auto id = pmt_to_uint64(pmt::dict_ref(msg, pmt::mp("id"), pmt::PMT_NIL));
    if (!id)
        throw std::invalid_argument("descriptor message: 'id' must be an integer");
    d.id = *id;
    d.name = dict_string(msg, "name");
    d.description = dict_string(msg, "description");
    d.numpy_header = dict_string(msg, "numpy_header");
    for (const pmt::pmt_t& field : sequence_field(msg, "format", "(code, bits) pairs")) {
        if (!pmt::is_pair(field) || !pmt::is_symbol(pmt::car(field)) ||
            !pmt::is_integer(pmt::cdr(field)))
            throw std::invalid_argument("descriptor message: 'format' must be a "
                                        "vector or list of (code, bits) pairs");
        const std::string code = pmt::symbol_to_string(pmt::car(field));
        if (code.size() != 1)
            throw std::invalid_argument(
                "descriptor message: a format code is one character");
        d.format.emplace_back(code[0], pmt::to_long(pmt::cdr(field)));
    }
    const pmt::pmt_t shape = pmt::dict_ref(msg, pmt::mp("shape"), pmt::PMT_NIL);
    if (pmt::is_s64vector(shape)) {
        d.shape = pmt::s64vector_elements(shape);
    } else {
        for (const pmt::pmt_t& dim : sequence_field(msg, "shape", "integers")) {
            if (!pmt::is_integer(dim))
                throw std::invalid_argument(
                    "descriptor message: 'shape' must be a vector or list of integers");
            d.shape.push_back(pmt::to_long(dim));
        }
    }
    return d;
}

pmt::pmt_t stats_to_pmt(const std::map<std::string, std::uint64_t>& stats)
{
    pmt::pmt_t dict = pmt::make_dict();
    for (const auto& kv : stats)
        dict = pmt::dict_add(dict, pmt::mp(kv.first), pmt::from_uint64(kv.second));
    return dict;
}

std::optional<std::uint64_t> pmt_to_uint64(const pmt::pmt_t& value)
{
    if (pmt::is_uint64(value))
        return pmt::to_uint64(value);
    if (pmt::is_integer(value)) {
        const long v = pmt::to_long(value);
        if (v >= 0)
            return static_cast<std::uint64_t>(v);
    }
    return std::nullopt;
}

} // namespace spead
} // namespace gr
