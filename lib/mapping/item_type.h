/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_ITEM_TYPE_H
#define INCLUDED_SPEAD_ITEM_TYPE_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! The stream item types of spead.source and spead.sink. */
class SPEAD_API item_type
{
public:
    /*! Parses `complex_float`, `fc32`, ... \throws std::invalid_argument naming
     * item_type and listing the choices. */
    static item_type parse(const std::string& name);

    /*! Bytes of one real number (a complex item has two). */
    std::size_t component_size() const { return d_component_size; }
    bool is_complex() const { return d_complex; }
    /*! Bytes of one scalar item (vlen 1). */
    std::size_t size() const { return d_component_size * (d_complex ? 2 : 1); }
    const std::string& name() const { return d_name; }

    /*! numpy descr of one element, e.g. `<c8`, `>i2`, `|i1`; complex integers are
     * described as pairs of integers (a trailing dimension of 2). */
    std::string numpy_descr(bool big_endian) const;
    /*! numpy shape of \p items items of \p vlen values. */
    std::vector<std::int64_t> numpy_shape(std::size_t items, std::size_t vlen) const;

private:
    std::string d_name;
    std::size_t d_component_size = 1;
    bool d_complex = false;
    char d_numpy_kind = 'i';
};

/*! Bytes of one stream item of \p type × \p vlen for a block's io signature; 1 when
 * either is invalid (the block's constructor then reports which). */
SPEAD_API int io_signature_size(const std::string& type, std::size_t vlen);

/*! What to do with the byte order of the payload. */
enum class byte_order_mode { automatic, as_is, swap };

/*! Parses `auto`, `as-is` (or `as_is`), `swap`. \p allow_auto false for the sink.
 * \throws std::invalid_argument naming byte_order. */
SPEAD_API byte_order_mode parse_byte_order(const std::string& name, bool allow_auto);

/*! Fills the fields a mapping config (heap_to_stream_config, stream_to_heap_config)
 * shares with a block's items (source_items, sink_items). */
template <typename Mapping, typename Items>
void map_items(const Items& items, Mapping& m)
{
    m.type = item_type::parse(items.get_item_type());
    m.byte_order =
        parse_byte_order(items.get_byte_order(), Items::allows_auto_byte_order);
    m.vlen = items.get_vlen();
    m.payload_item = items.get_payload_item();
    m.len_tag_key = items.get_len_tag_key();
}

/*! True on a big-endian host. */
constexpr bool host_is_big_endian() { return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__; }

/*! Copies \p bytes bytes reversing the byte order of every \p unit bytes (1, 2, 4 or
 * 8; 1 is a plain copy). \p bytes need not be a multiple of \p unit: a tail is copied
 * as it is. */
SPEAD_API void copy_swapped(std::uint8_t* dst,
                            const std::uint8_t* src,
                            std::size_t bytes,
                            std::size_t unit);

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_ITEM_TYPE_H */
