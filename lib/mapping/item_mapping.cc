/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/item_id_checks.h"
#include "mapping/item_type.h"
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/item_mapping.h>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace spead {

void check_source_item_id(const std::string& option,
                          std::uint64_t id,
                          const std::string& use)
{
    if (id != 0 && (id <= item_id::stream_ctrl || id >= (1ull << 56)))
        throw std::invalid_argument(option + ": " + item_id_tag_name(id) +
                                    " is a reserved or impossible item id; use " + use);
}

void check_sink_item_id(const std::string& option,
                        std::uint64_t id,
                        const flavour& f,
                        const std::string& default_id)
{
    if (id <= item_id::descriptor_dtype || id > f.max_item_id())
        throw std::invalid_argument(
            option + ": " + item_id_tag_name(id) + " is reserved or does not fit " +
            f.name() + "; use an id above 0x15 and up to " +
            item_id_tag_name(f.max_item_id()) + " (default " + default_id + ")");
}

// ---- item_mapping_base ----

template <typename Derived>
Derived& item_mapping_base<Derived>::set_item_type(const std::string& name)
{
    d_item_type_size = item_type::parse(name).size(); // names item_type when refused
    d_item_type = name;
    return self();
}

template <typename Derived>
Derived& item_mapping_base<Derived>::set_vlen(std::size_t vlen)
{
    if (vlen < 1 || vlen > (1u << 24))
        throw std::invalid_argument("vlen: " + std::to_string(vlen) +
                                    " is out of range; use 1 (scalar items) up to 2^24");
    d_vlen = vlen;
    return self();
}

template <typename Derived>
Derived& item_mapping_base<Derived>::set_byte_order(const std::string& order)
{
    parse_byte_order(order, Derived::allows_auto_byte_order); // names byte_order
    d_byte_order = order;
    return self();
}

template class SPEAD_API item_mapping_base<source_items>;
template class SPEAD_API item_mapping_base<sink_items>;

// ---- source_items ----

source_items& source_items::set_payload_item(std::uint64_t id)
{
    check_source_item_id("payload_item",
                         id,
                         "0 (every addressed item) or the id of the data item (0x07 "
                         "and up, e.g. 0x1000)");
    d_payload_item = id;
    return *this;
}

source_items& source_items::set_timestamp_item(std::uint64_t id)
{
    check_source_item_id(
        "timestamp_item", id, "0 (no rx_time) or the id of the sample counter item");
    d_timestamp_item = id;
    return *this;
}

/*! Throws \p message unless \p value is a finite number >= 0. */
static void require_finite(double value, const std::string& message)
{
    if (!std::isfinite(value) || value < 0)
        throw std::invalid_argument(message);
}

source_items& source_items::set_sample_rate(double rate)
{
    require_finite(rate,
                   "sample_rate: " + std::to_string(rate) +
                       " is not a rate; give the timestamp counter's samples per second "
                       "(> 0) when timestamp_item is set (rx_time = timestamp / "
                       "sample_rate + sync_time)");
    return detail::assign(*this, d_sample_rate, rate);
}

source_items& source_items::set_sync_time(double seconds)
{
    require_finite(seconds,
                   "sync_time: " + std::to_string(seconds) +
                       " is not a UNIX time; give the time of timestamp 0 in seconds "
                       "(>= 0)");
    return detail::assign(*this, d_sync_time, seconds);
}

// ---- sink_items ----

sink_items& sink_items::set_flavour(const std::string& name)
{
    flavour parsed;
    try {
        parsed = flavour::from_string(name);
    } catch (const std::invalid_argument&) {
        throw std::invalid_argument("flavour: '" + name +
                                    "' is not a SPEAD flavour; use 64-40 (spead2's "
                                    "default) or 64-48");
    }
    if (parsed.heap_address_bits() != 40 && parsed.heap_address_bits() != 48)
        throw std::invalid_argument("flavour: '" + name +
                                    "' is not supported by the sink; use 64-40 or 64-48");
    d_flavour = name;
    return *this;
}

sink_items& sink_items::set_payload_item(std::uint64_t id)
{
    // The largest flavour's ids here; the flavour's own at make().
    check_sink_item_id("payload_item", id, flavour(40), "0x1000");
    d_payload_item = id;
    return *this;
}

sink_items& sink_items::set_heap_cnt_step(std::uint64_t step)
{
    if (step == 0)
        throw std::invalid_argument("heap_cnt_step: must be at least 1 (heaps need "
                                    "distinct cnts); give e.g. 1, or the number of "
                                    "senders sharing a receiver");
    d_heap_cnt_step = step;
    return *this;
}

} // namespace spead
} // namespace gr
