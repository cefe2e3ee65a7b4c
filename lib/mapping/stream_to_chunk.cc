/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_messages.h"
#include "mapping/stream_to_chunk.h"
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

namespace {

constexpr double seconds_per_day = 86400.0;

/*! "10.8 minutes", "3.2 hours": a duration a reader takes in at a glance. */
std::string readable_duration(double seconds)
{
    char text[64];
    if (seconds < 120)
        std::snprintf(text, sizeof text, "%.1f seconds", seconds);
    else if (seconds < 7200)
        std::snprintf(text, sizeof text, "%.1f minutes", seconds / 60);
    else
        std::snprintf(text, sizeof text, "%.1f hours", seconds / 3600);
    return text;
}

} // namespace

namespace {
const stream_to_chunk_config& validated(const stream_to_chunk_config& c)
{
    c.validate_layout();
    if (c.heap_items == 0)
        throw std::invalid_argument("heap_items: 0 in continuous mode; give the items "
                                    "per heap per input (>= 1)");
    if (c.item_bytes != c.type.size() * c.vlen)
        throw std::invalid_argument("item_bytes: " + std::to_string(c.item_bytes) +
                                    " is not the bytes of one " + c.type.name() +
                                    " item × vlen " + std::to_string(c.vlen));
    return c;
}
} // namespace

stream_to_chunk::stream_to_chunk(const stream_to_chunk_config& config,
                                 gr::logger_ptr logger)
    : sink_mapping(validated(config), std::move(logger)),
      d_config(config),
      d_rx_time_key(pmt::mp("rx_time")),
      d_base_timestamp(config.start_timestamp)
{
    for (const descriptor& d : descriptors())
        learn_descriptor(d);
}

std::map<std::string, std::uint64_t> stream_to_chunk::counters() const
{
    auto out = sink_mapping::counters();
    out["timestamps_wrapped"] = d_timestamps_wrapped.load();
    out["rx_time_ignored"] = d_rx_time_ignored.load();
    return out;
}

std::size_t stream_to_chunk::send(const sink_input& in, send_slots& out)
{
    const std::size_t heap_items = d_config.heap_items;
    const std::size_t inputs = in.items->size();
    const std::size_t done = handed(in); // still sent from the input: go on after them
    std::size_t rounds = static_cast<std::size_t>((*in.available)[0]) / heap_items;
    for (int n : *in.available)
        rounds = std::min(rounds, (static_cast<std::size_t>(n) - done) / heap_items);
    for (std::size_t r = 0; r < rounds; r++) {
        // Every input has consumed as much as input 0: one offset for all.
        const std::size_t at = done + r * heap_items;
        const std::uint64_t start = in.first + at;
        for (std::size_t i = 0; i < inputs; i++) {
            d_tags.clear();
            in.tags(i, start, start + heap_items, d_rx_time_key, d_tags);
            for (const gr::tag_t& t : d_tags)
                rx_time_tag(t.offset - start, t.value);
        }
        for (std::size_t i = 0; i < inputs; i++)
            send_data_heap(
                out,
                { static_cast<const std::uint8_t*>((*in.items)[i]) + at * item_size(),
                  heap_items,
                  start },
                in,
                i % out.substreams(),
                [this,
                 i](send::heap& h, const std::uint8_t* payload, std::uint64_t& cnt) {
                    cnt = build_heap(h, i, payload);
                    return true;
                });
        next_round();
    }
    return settle(in, done + rounds * heap_items, out);
}

void stream_to_chunk::reset()
{
    sink_mapping::reset();
    d_round = 0;
    d_base_round = 0;
    d_base_timestamp = d_config.start_timestamp;
    d_next_base_timestamp.reset();
    d_heaps = 0;
    d_timestamps_wrapped = 0;
    d_rx_time_ignored = 0;
    const auto period = wrap_period();
    const int bits = d_config.flavour.heap_address_bits();
    if (period && *period < seconds_per_day && d_logger)
        d_logger->warn("timestamps wrap every {} at sample_rate {} Hz in the {}-bit "
                       "immediates of {}: each wrap is a backwards jump (a resync to a "
                       "continuous spead.source); {}",
                       readable_duration(*period),
                       d_config.sample_rate,
                       bits,
                       d_config.flavour.name(),
                       bits < 48 ? "use flavour 64-48 for " +
                                       readable_duration(std::ldexp(*period, 48 - bits))
                                 : std::string("no wider flavour is common; receivers "
                                               "must expect the wraps"));
}

std::optional<double> stream_to_chunk::wrap_period() const
{
    if (d_config.sample_rate <= 0)
        return std::nullopt;
    return std::ldexp(1.0, d_config.flavour.heap_address_bits()) / d_config.sample_rate;
}

std::vector<descriptor> stream_to_chunk::descriptors() const
{
    // An unsigned integer as wide as the immediate field: spead2 sends such an item
    // of shape () as an immediate, and reads ours back as one.
    const auto immediate = [this](std::uint64_t id, const char* name, const char* text) {
        descriptor d;
        d.id = id;
        d.name = name;
        d.description = text;
        d.format = { { 'u', d_config.flavour.heap_address_bits() } };
        return d;
    };
    std::vector<descriptor> out{ immediate(
        d_config.timestamp_item, "timestamp", "timestamp of the heap's first sample") };
    if (d_config.substream_item != 0)
        out.push_back(immediate(d_config.substream_item,
                                "substream",
                                "index of the input (substream) the heap comes from"));
    return out;
}

void stream_to_chunk::ignore_rx_time(const std::string& what, const std::string& why)
{
    d_rx_time_ignored++;
    warn_once("rx_time " + what,
              "rx_time tag ignored: " + why + " (counted in rx_time_ignored)");
}

void stream_to_chunk::rx_time_tag(std::uint64_t items_into_heap, const pmt::pmt_t& value)
{
    if (d_config.sample_rate <= 0)
        return ignore_rx_time("rate",
                              "sample_rate is 0; give the sample rate to turn rx_time "
                              "into timestamps");
    const auto secs = pmt::is_tuple(value) && pmt::length(value) == 2
                          ? pmt_to_uint64(pmt::tuple_ref(value, 0))
                          : std::nullopt;
    if (!secs || !pmt::is_real(pmt::tuple_ref(value, 1)))
        return ignore_rx_time("value",
                              "its value is not a (uint64 seconds, double fraction) "
                              "tuple as UHD sends");
    const long double since_sync =
        static_cast<long double>(*secs) - static_cast<long double>(d_config.sync_time) +
        static_cast<long double>(pmt::to_double(pmt::tuple_ref(value, 1)));
    const long double timestamp = std::round(since_sync * d_config.sample_rate);
    if (!(timestamp >= 0) || timestamp >= std::ldexp(1.0L, 64))
        return ignore_rx_time("range",
                              "the time is before sync_time or beyond a 64-bit "
                              "timestamp; check sync_time");
    const auto base = static_cast<std::uint64_t>(timestamp);
    if (items_into_heap > 0) {
        // The heap under way keeps its timestamp; the next starts where the tag says.
        warn_once("rx_time mid-heap",
                  "an rx_time tag " + std::to_string(items_into_heap) +
                      " items into a heap of " + std::to_string(d_config.heap_items) +
                      ": applied from the next heap. Align rx_time tags to heaps of "
                      "heap_items items");
        const long double rest =
            static_cast<long double>(d_config.heap_items - items_into_heap) *
            d_config.timestamp_step / d_config.heap_items;
        d_next_base_timestamp = base + static_cast<std::uint64_t>(std::llround(rest));
        return;
    }
    d_base_round = d_round;
    d_base_timestamp = base;
    d_next_base_timestamp.reset();
}

std::uint64_t stream_to_chunk::round_timestamp() const
{
    // Wraps modulo 2^64 like a hardware counter would; build_heap() wraps it further.
    return d_base_timestamp + (d_round - d_base_round) * d_config.timestamp_step;
}

std::uint64_t
stream_to_chunk::build_heap(send::heap& h, std::size_t input, const std::uint8_t* payload)
{
    const std::uint64_t mask = d_config.flavour.max_address();
    std::uint64_t timestamp = round_timestamp();
    if (timestamp > mask) {
        d_timestamps_wrapped++;
        warn_once("wrap",
                  "timestamp " + std::to_string(timestamp) + " does not fit the " +
                      std::to_string(d_config.flavour.heap_address_bits()) +
                      "-bit immediate of " + d_config.flavour.name() +
                      ": sent modulo 2^" +
                      std::to_string(d_config.flavour.heap_address_bits()) +
                      " (counted in timestamps_wrapped), so receivers see the "
                      "timestamps jump backwards (a continuous spead.source resyncs). " +
                      std::string(d_config.flavour.heap_address_bits() < 48
                                      ? "Use flavour 64-48, or a smaller"
                                      : "Use a smaller") +
                      " start_timestamp or a sync_time closer to now");
        timestamp &= mask;
    }
    h.add_immediate(d_config.timestamp_item, timestamp);
    if (d_config.substream_item != 0)
        h.add_immediate(d_config.substream_item, input);
    // Never an immediate, even when tiny: a receiver takes immediates as metadata.
    h.add_item(d_config.payload_item, payload, d_config.heap_items * item_size(), false);
    h.set_repeat_immediates(true);
    // Wraps like the timestamp: receivers assemble by cnt only among recent heaps.
    return (d_config.cnt_start + d_heaps++ * d_config.cnt_step) & mask;
}

void stream_to_chunk::next_round()
{
    d_round++;
    if (d_next_base_timestamp) {
        d_base_round = d_round;
        d_base_timestamp = *d_next_base_timestamp;
        d_next_base_timestamp.reset();
    }
}

} // namespace spead
} // namespace gr
