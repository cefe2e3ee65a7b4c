/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/send_heap.h>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace spead {
namespace send {

namespace {

std::string hex_id(std::uint64_t id)
{
    std::ostringstream s;
    s << "0x" << std::hex << id;
    return s.str();
}

} // namespace

heap::heap(const gr::spead::flavour& f) : d_flavour(f) {}

void heap::check_id(std::uint64_t id) const
{
    if (id == item_id::null)
        throw std::invalid_argument(
            "send::heap: item id 0x0 is NULL padding, which the packetiser adds itself; "
            "give the item an id of 0x7 or above");
    if (item_id::is_packet_special(id))
        throw std::invalid_argument(
            "send::heap: item id " + hex_id(id) +
            " is a per-packet special (HEAP_CNT, HEAP_SIZE, HEAP_OFFSET or "
            "PAYLOAD_LENGTH) that the packetiser writes; pass the heap cnt to the stream "
            "and give the item an id of 0x7 or above");
    if (id > d_flavour.max_item_id())
        throw std::invalid_argument(
            "send::heap: item id " + hex_id(id) + " does not fit the " +
            std::to_string(d_flavour.item_id_bits()) + "-bit id field of " +
            d_flavour.name() + "; use an id up to " + hex_id(d_flavour.max_item_id()) +
            " or a flavour with fewer heap address bits");
}

void heap::add_item(std::uint64_t id,
                    const void* data,
                    std::size_t length,
                    bool allow_immediate)
{
    check_id(id);
    if (data == nullptr && length > 0)
        throw std::invalid_argument("send::heap: item " + hex_id(id) + " has " +
                                    std::to_string(length) +
                                    " bytes but no data pointer; pass the item's memory");
    d_items.push_back(item{
        id, static_cast<const std::uint8_t*>(data), length, allow_immediate, false, 0 });
}

void heap::add_item(std::uint64_t id,
                    std::vector<std::uint8_t> value,
                    bool allow_immediate)
{
    check_id(id);
    d_owned.push_back(std::move(value));
    const std::vector<std::uint8_t>& kept = d_owned.back();
    d_items.push_back(item{ id, kept.data(), kept.size(), allow_immediate, false, 0 });
}

void heap::add_immediate(std::uint64_t id, std::uint64_t value)
{
    check_id(id);
    if (value > d_flavour.max_address())
        throw std::invalid_argument(
            "send::heap: immediate value " + hex_id(value) + " of item " + hex_id(id) +
            " does not fit the " + std::to_string(d_flavour.heap_address_bits()) +
            "-bit immediate field of " + d_flavour.name() +
            "; send it as an addressed item (add_item with allow_immediate = false)");
    d_items.push_back(item{ id, nullptr, 0, true, true, value });
}

void heap::add_descriptor(const descriptor& d)
{
    add_item(item_id::descriptor, encode_descriptor(d, d_flavour), false);
}

void heap::add_start() { add_immediate(item_id::stream_ctrl, stream_ctrl::start); }

void heap::add_end() { add_immediate(item_id::stream_ctrl, stream_ctrl::stop); }

} // namespace send
} // namespace spead
} // namespace gr
