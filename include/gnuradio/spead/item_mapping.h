/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_ITEM_MAPPING_H
#define INCLUDED_SPEAD_ITEM_MAPPING_H

/* How a block's stream items map to and from heaps: the part of source_config and
 * sink_config that is neither the transport nor the stream. */

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/config_setter.h>
#include <cstddef>
#include <cstdint>
#include <string>

namespace gr {
namespace spead {

/*!
 * \brief What the source and the sink share of the mapping between items and heaps:
 * the stream item type, the vector length, the length tag and the byte order.
 * \p Derived (source_items, sink_items) adds its own and gives
 * `default_byte_order` and `allows_auto_byte_order`; the setters return it, so calls
 * chain. Setters throw std::invalid_argument naming the option, the value and the fix.
 */
template <typename Derived>
class SPEAD_API item_mapping_base
{
public:
    /*! `complex_float` (`fc32`, 8 bytes, default), `complex_int16` (`sc16`, 4),
     * `complex_int8` (`sc8`, 2), `float` (`f32`, 4), `int32` (`s32`, 4), `int16`
     * (`s16`, 2), `int8` (`s8`, `byte`, 1). */
    Derived& set_item_type(const std::string& name);
    const std::string& get_item_type() const { return d_item_type; }
    /*! Bytes of one scalar item of the item type. */
    std::size_t get_item_type_size() const { return d_item_type_size; }

    /*! Items per stream vector, 1 to 2^24 (default 1). */
    Derived& set_vlen(std::size_t vlen);
    std::size_t get_vlen() const { return d_vlen; }
    /*! Bytes of one stream item: the item type's size × vlen. */
    std::size_t get_item_size() const { return d_item_type_size * d_vlen; }

    /*! Key of the length tag (default `packet_len`); empty: none. */
    Derived& set_len_tag_key(const std::string& key)
    {
        return detail::assign(self(), d_len_tag_key, key);
    }
    const std::string& get_len_tag_key() const { return d_len_tag_key; }

    /*! `as-is`, `swap` (each real component) or, on the source, `auto`. */
    Derived& set_byte_order(const std::string& order);
    const std::string& get_byte_order() const { return d_byte_order; }

protected:
    item_mapping_base() = default;

private:
    Derived& self() { return static_cast<Derived&>(*this); }

    std::string d_item_type = "complex_float";
    std::size_t d_item_type_size = 8;
    std::size_t d_vlen = 1;
    std::string d_len_tag_key = "packet_len";
    std::string d_byte_order = Derived::default_byte_order;
};

/*!
 * \brief How spead.source turns heaps into items and tags: which item is the
 * payload, and the timestamp that gives rx_time.
 */
class SPEAD_API source_items : public item_mapping_base<source_items>
{
public:
    static constexpr const char* default_byte_order = "auto";
    static constexpr bool allows_auto_byte_order = true;

    /*! Id of the item that is the stream payload, 0x07 and up; 0 (default): every
     * addressed item but descriptors and NULL, concatenated. */
    source_items& set_payload_item(std::uint64_t id);
    std::uint64_t get_payload_item() const { return d_payload_item; }

    /*! Id of the item holding a sample counter; 0 (default): no rx_time tags. */
    source_items& set_timestamp_item(std::uint64_t id);
    std::uint64_t get_timestamp_item() const { return d_timestamp_item; }

    /*! Samples per second of the timestamp counter, >= 0 (0: none; needed for
     * rx_time when timestamp_item is set). */
    source_items& set_sample_rate(double rate);
    double get_sample_rate() const { return d_sample_rate; }

    /*! UNIX time in seconds of timestamp 0, >= 0 (default 0). */
    source_items& set_sync_time(double seconds);
    double get_sync_time() const { return d_sync_time; }

private:
    std::uint64_t d_payload_item = 0;
    std::uint64_t d_timestamp_item = 0;
    double d_sample_rate = 0.0;
    double d_sync_time = 0.0;
};

/*!
 * \brief How spead.sink turns items and tags into heaps: the heap format (flavour),
 * the payload item and its descriptor, heap cnts and framing.
 */
class SPEAD_API sink_items : public item_mapping_base<sink_items>
{
public:
    static constexpr const char* default_byte_order = "as-is";
    static constexpr bool allows_auto_byte_order = false;

    /*! `64-40` (default, spead2's) or `64-48`. */
    sink_items& set_flavour(const std::string& name);
    const std::string& get_flavour() const { return d_flavour; }

    /*! Id of the payload item, above 0x15 and within the flavour (default 0x1000;
     * the flavour is checked at make()). */
    sink_items& set_payload_item(std::uint64_t id);
    std::uint64_t get_payload_item() const { return d_payload_item; }

    /*! Items per heap when there is no length tag (and in continuous mode); 0
     * (default): a heap per tagged packet. */
    sink_items& set_heap_items(std::size_t items)
    {
        return detail::assign(*this, d_heap_items, items);
    }
    std::size_t get_heap_items() const { return d_heap_items; }

    /*! The first heap's cnt (default 1) and the step between heaps (default 1, > 0;
     * both within the flavour, checked at make()). */
    sink_items& set_heap_cnt_start(std::uint64_t cnt)
    {
        return detail::assign(*this, d_heap_cnt_start, cnt);
    }
    std::uint64_t get_heap_cnt_start() const { return d_heap_cnt_start; }
    sink_items& set_heap_cnt_step(std::uint64_t step);
    std::uint64_t get_heap_cnt_step() const { return d_heap_cnt_step; }

    /*! Descriptors again every this many heaps; 0 (default): only at the start and
     * when they change. */
    sink_items& set_descriptor_interval(std::size_t heaps)
    {
        return detail::assign(*this, d_descriptor_interval, heaps);
    }
    std::size_t get_descriptor_interval() const { return d_descriptor_interval; }

    /*! The payload item's descriptor name (default `payload`) and description. */
    sink_items& set_payload_name(const std::string& name)
    {
        return detail::assign(*this, d_payload_name, name);
    }
    const std::string& get_payload_name() const { return d_payload_name; }
    sink_items& set_payload_description(const std::string& text)
    {
        return detail::assign(*this, d_payload_description, text);
    }
    const std::string& get_payload_description() const { return d_payload_description; }

private:
    std::string d_flavour = "64-40";
    std::uint64_t d_payload_item = 0x1000;
    std::size_t d_heap_items = 0;
    std::uint64_t d_heap_cnt_start = 1;
    std::uint64_t d_heap_cnt_step = 1;
    std::size_t d_descriptor_interval = 0;
    std::string d_payload_name = "payload";
    std::string d_payload_description;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_ITEM_MAPPING_H */
