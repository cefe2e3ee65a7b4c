/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "heap_pool.h"
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/recv_heap.h>

namespace gr {
namespace spead {
namespace recv {

std::uint64_t heap::cnt() const { return d_storage->cnt; }
const gr::spead::flavour& heap::get_flavour() const { return d_storage->heap_flavour; }
bool heap::is_complete() const { return d_storage->complete; }
std::uint64_t heap::size() const
{
    return d_storage->has_heap_size ? d_storage->heap_size : d_storage->extent;
}
std::uint64_t heap::received_bytes() const { return d_storage->received; }
std::size_t heap::packets() const { return d_storage->packets; }
std::vector<std::pair<std::uint64_t, std::uint64_t>> heap::received_ranges() const
{
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    for (const auto& r : d_storage->received_ranges.ranges())
        out.emplace_back(r.begin, r.end);
    return out;
}
const std::uint8_t* heap::payload() const { return d_storage->buffer.get(); }
const std::vector<item>& heap::items() const { return d_storage->items; }

const item* heap::find(std::uint64_t id) const
{
    for (const item& it : d_storage->items)
        if (it.id == id)
            return &it;
    return nullptr;
}

bool heap::has_stream_ctrl(std::uint64_t value) const
{
    for (const item& it : d_storage->items)
        if (it.id == item_id::stream_ctrl && it.is_immediate &&
            it.immediate_value == value)
            return true;
    return false;
}

bool heap::is_stop() const { return has_stream_ctrl(stream_ctrl::stop); }

std::vector<descriptor> heap::descriptors(bool pyspead_widths) const
{
    std::vector<descriptor> out;
    for (const item& it : d_storage->items) {
        if (it.id != item_id::descriptor || it.is_immediate)
            continue;
        if (auto d = decode_descriptor(it.data, it.length, pyspead_widths))
            out.push_back(std::move(*d));
    }
    return out;
}

} // namespace recv
} // namespace spead
} // namespace gr
