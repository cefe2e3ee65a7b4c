/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/item_type.h"
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

struct type_entry {
    const char* name;
    const char* alias;
    std::size_t component_size;
    bool complex;
    char numpy_kind;
};

constexpr type_entry type_table[] = {
    { "complex_float", "fc32", 4, true, 'c' }, { "complex_int16", "sc16", 2, true, 'i' },
    { "complex_int8", "sc8", 1, true, 'i' },   { "float", "f32", 4, false, 'f' },
    { "int32", "s32", 4, false, 'i' },         { "int16", "s16", 2, false, 'i' },
    { "int8", "s8", 1, false, 'i' },
};

template <typename T, T (*Swap)(T)>
void swap_units(std::uint8_t* dst, const std::uint8_t* src, std::size_t n)
{
    for (std::size_t i = 0; i < n; i++) {
        T v;
        std::memcpy(&v, src + i * sizeof(T), sizeof(T));
        v = Swap(v);
        std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
    }
}

std::uint16_t bswap16(std::uint16_t v) { return __builtin_bswap16(v); }
std::uint32_t bswap32(std::uint32_t v) { return __builtin_bswap32(v); }
std::uint64_t bswap64(std::uint64_t v) { return __builtin_bswap64(v); }

} // namespace

item_type item_type::parse(const std::string& name)
{
    for (const type_entry& e : type_table) {
        if (name == e.name || name == e.alias ||
            (name == "byte" && e.component_size == 1 && !e.complex)) {
            item_type t;
            t.d_name = e.name;
            t.d_component_size = e.component_size;
            t.d_complex = e.complex;
            t.d_numpy_kind = e.numpy_kind;
            return t;
        }
    }
    throw std::invalid_argument(
        "item_type: '" + name +
        "' is not a stream item type; use complex_float (fc32), complex_int16 (sc16), "
        "complex_int8 (sc8), float (f32), int32 (s32), int16 (s16) or int8 (s8, byte)");
}

std::string item_type::numpy_descr(bool big_endian) const
{
    if (d_component_size == 1)
        return "|i1";
    const char order = big_endian ? '>' : '<';
    if (d_numpy_kind == 'c')
        return std::string(1, order) + "c" + std::to_string(2 * d_component_size);
    return std::string(1, order) + d_numpy_kind + std::to_string(d_component_size);
}

std::vector<std::int64_t> item_type::numpy_shape(std::size_t items,
                                                 std::size_t vlen) const
{
    std::vector<std::int64_t> shape{ static_cast<std::int64_t>(items) };
    if (vlen > 1)
        shape.push_back(static_cast<std::int64_t>(vlen));
    // numpy has complex floats but no complex integers: those are pairs.
    if (d_complex && d_numpy_kind != 'c')
        shape.push_back(2);
    return shape;
}

byte_order_mode parse_byte_order(const std::string& name, bool allow_auto)
{
    if (name == "as-is" || name == "as_is")
        return byte_order_mode::as_is;
    if (name == "swap")
        return byte_order_mode::swap;
    if (allow_auto && name == "auto")
        return byte_order_mode::automatic;
    throw std::invalid_argument(
        "byte_order: '" + name + "' is not a byte order; use " +
        (allow_auto ? "auto (as the item's descriptor says), as-is or swap"
                    : "as-is (host order) or swap"));
}

void copy_swapped(std::uint8_t* dst,
                  const std::uint8_t* src,
                  std::size_t bytes,
                  std::size_t unit)
{
    std::size_t whole = 0;
    switch (unit) {
    case 2:
        whole = bytes / 2;
        swap_units<std::uint16_t, bswap16>(dst, src, whole);
        whole *= 2;
        break;
    case 4:
        whole = bytes / 4;
        swap_units<std::uint32_t, bswap32>(dst, src, whole);
        whole *= 4;
        break;
    case 8:
        whole = bytes / 8;
        swap_units<std::uint64_t, bswap64>(dst, src, whole);
        whole *= 8;
        break;
    default:
        break;
    }
    if (whole < bytes)
        std::memcpy(dst + whole, src + whole, bytes - whole);
}

int io_signature_size(const std::string& type, std::size_t vlen)
{
    try {
        const std::size_t size = item_type::parse(type).size() * vlen;
        return size > 0 && size < (1u << 30) ? static_cast<int>(size) : 1;
    } catch (const std::exception&) {
        return 1;
    }
}

} // namespace spead
} // namespace gr
