/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/sink_mapping.h"
#include <gnuradio/spead/item_ids.h>
#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace spead {

sink_mapping::sink_mapping(const sink_heap_config& config, gr::logger_ptr logger)
    : d_heap_config(config),
      d_item_size(config.type.size() * config.vlen),
      d_logger(std::move(logger)),
      d_next_control_cnt(config.flavour.max_address())
{
    if (!d_heap_config.payload_name.empty())
        d_name_to_id[d_heap_config.payload_name] = d_heap_config.payload_item;
}

sink_mapping::~sink_mapping() = default;

void sink_mapping::reset()
{
    d_next_control_cnt = d_heap_config.flavour.max_address();
    d_run_started = false;
    d_descriptors_dirty = true;
    d_heaps_since_descriptors = 0;
    d_handed_until = 0;
    d_said_copying = false;
    d_holds_input = false;
    d_data_heaps = 0;
    d_control_heaps = 0;
    d_heaps_rejected = 0;
}

std::map<std::string, std::uint64_t> sink_mapping::counters() const
{
    return { { "data_heaps", d_data_heaps.load() },
             { "control_heaps", d_control_heaps.load() },
             { "heaps_rejected", d_heaps_rejected.load() } };
}

void sink_mapping::warn_once(const std::string& what, const std::string& message)
{
    if (d_warned.insert(what).second && d_logger)
        d_logger->warn("{}", message);
}

void sink_mapping::heap_rejected(const std::string& why)
{
    d_heaps_rejected++;
    warn_once("rejected " + why,
              "heap not sent: " + why + " (counted in heaps_rejected)");
}

std::uint64_t sink_mapping::id_of_name(const std::string& name) const
{
    const auto it = d_name_to_id.find(name);
    return it == d_name_to_id.end() ? 0 : it->second;
}

// ---- descriptors and control heaps
// ---------------------------------------------------------

void sink_mapping::learn_descriptor(const descriptor& d)
{
    const sink_heap_config& c = d_heap_config;
    if (d.id == c.payload_item)
        return; // the sink describes its own payload
    if (d.id <= item_id::stream_ctrl || d.id > c.flavour.max_item_id()) {
        warn_once("descriptor " + item_id_tag_name(d.id),
                  "descriptor for " + item_id_tag_name(d.id) + " (" + d.name +
                      ") ignored: the id is reserved or does not fit " +
                      c.flavour.name());
        return;
    }
    auto it = d_descriptors.find(d.id);
    if (it != d_descriptors.end()) {
        if (it->second == d)
            return;
        if (!it->second.name.empty())
            d_name_to_id.erase(it->second.name);
    }
    d_descriptors[d.id] = d;
    if (!d.name.empty() && d.name != c.payload_name)
        d_name_to_id[d.name] = d.id;
    d_descriptors_dirty = true;
}

bool sink_mapping::descriptors_due(std::size_t items)
{
    if (!d_heap_config.payload_name.empty() && items != d_described_items) {
        d_described_items = items;
        d_descriptors_dirty = true;
    }
    return !d_run_started || d_descriptors_dirty ||
           (d_heap_config.descriptor_interval > 0 &&
            d_heaps_since_descriptors >= d_heap_config.descriptor_interval);
}

void sink_mapping::build_control_heap(send::heap& h, bool descriptors, bool stop)
{
    const sink_heap_config& c = d_heap_config;
    if (descriptors && !d_run_started)
        h.add_start();
    if (descriptors) {
        if (!c.payload_name.empty()) {
            descriptor d;
            d.id = c.payload_item;
            d.name = c.payload_name;
            d.description = c.payload_description;
            const bool big =
                (c.byte_order == byte_order_mode::swap) != host_is_big_endian();
            d.numpy_header = make_numpy_header(
                c.type.numpy_descr(big), c.type.numpy_shape(d_described_items, c.vlen));
            h.add_descriptor(d);
        }
        for (const auto& kv : d_descriptors)
            h.add_descriptor(kv.second);
        d_run_started = true;
        d_descriptors_dirty = false;
        d_heaps_since_descriptors = 0;
    }
    if (stop)
        h.add_end();
}

void sink_mapping::send_control_heap(send_slots& out, bool descriptors, bool stop)
{
    send::heap h(d_heap_config.flavour);
    build_control_heap(h, descriptors, stop);
    if (h.empty())
        return;
    for (std::size_t i = 0; i < out.substreams(); i++) {
        const std::uint64_t cnt = next_control_cnt();
        try {
            out.send_now(h, cnt, i);
            control_heap_sent();
        } catch (const std::exception& e) {
            if (d_logger)
                d_logger->error("control heap {} not sent: {}", cnt, e.what());
        }
    }
}

void sink_mapping::send_stop_heap(send_slots& out)
{
    // Whatever was sent, even nothing (head(0) upstream, every packet dropped): a
    // receiver waiting for this sender's end must not wait forever.
    send_control_heap(out, false, true);
}

bool sink_mapping::sends_in_place(std::size_t items,
                                  const sink_input& in,
                                  const send_slots& out)
{
    if (d_heap_config.byte_order == byte_order_mode::swap || !in.items_stay_put)
        return false; // the copy swaps; or the buffer may move what it holds
    const std::size_t capacity = in.capacity;
    if (2 * items <= capacity)
        return true;
    if (!d_said_copying && d_logger) {
        d_said_copying = true;
        d_logger->info("heaps of {} items are copied before they are sent: the input "
                       "buffer holds {} items, fewer than two such heaps. To send them "
                       "from the buffer in place, and faster, give the block upstream a "
                       "minimum output buffer (min_output_buffer) of {} items, as many "
                       "heaps as the sink has in flight ({}; docs/usage.md, \"Sending "
                       "fast\")",
                       items,
                       capacity,
                       out.size() * items,
                       out.size());
    }
    return false;
}

std::size_t
sink_mapping::settle(const sink_input& in, std::size_t handed, send_slots& out)
{
    d_handed_until = in.first + handed;
    for (;;) {
        const std::uint64_t until = std::min(out.first_held(), d_handed_until);
        if (until > in.first || handed == 0) {
            d_holds_input = until < d_handed_until;
            return static_cast<std::size_t>(until - in.first);
        }
        out.wait();
    }
}

void sink_mapping::copy_payload(std::uint8_t* dst,
                                const std::uint8_t* src,
                                std::size_t items) const
{
    const std::size_t bytes = items * d_item_size;
    if (d_heap_config.byte_order == byte_order_mode::swap)
        copy_swapped(dst, src, bytes, d_heap_config.type.component_size());
    else
        std::memcpy(dst, src, bytes);
}

} // namespace spead
} // namespace gr
