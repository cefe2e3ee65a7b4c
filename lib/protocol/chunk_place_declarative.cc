/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The declarative placement peer: chunk, index and offset from timestamp and substream.

#include <gnuradio/spead/recv_chunk_place.h>
#include <gnuradio/spead/substream_set.h>
#include <algorithm>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace recv {

void declarative_placement_config::validate() const
{
    const auto need = [](bool ok, const std::string& what) {
        if (!ok)
            throw std::invalid_argument(what);
    };
    need(timestamp_item != 0,
         "timestamp_item: 0 is not an item; give the id of the immediate item holding "
         "each heap's timestamp (e.g. 0x1600)");
    need(timestamp_step != 0,
         "timestamp_step: 0; give the timestamp difference of consecutive heaps (e.g. "
         "samples per heap)");
    need(heap_bytes != 0, "heap_bytes: 0; give the HEAP_SIZE of every data heap");
    need(heaps_per_chunk != 0,
         "heaps_per_chunk: 0; give the positions per chunk (e.g. 64)");
    need(substreams != 0, "substreams: 0; give at least 1");
    need(substream_item != 0 || substreams == 1,
         "substreams: " + std::to_string(substreams) +
             " without a substream_item; give the item naming each heap's substream");
    substream_set::choose(first_substream, substream_ids, substreams, substream_item);
}

namespace {

class declarative_placement final : public chunk_placement_policy
{
public:
    explicit declarative_placement(const declarative_placement_config& c)
        : d_config((c.validate(), c)),
          d_taken(substream_set::choose(
              c.first_substream, c.substream_ids, c.substreams, c.substream_item))
    {
    }

    std::vector<std::uint64_t> items() const override
    {
        if (d_config.substream_item == 0)
            return { d_config.timestamp_item };
        return { d_config.timestamp_item, d_config.substream_item };
    }

    void bind(const std::vector<std::uint64_t>& stream_items) override
    {
        const auto index = [&](std::uint64_t id) {
            return std::size_t(std::find(stream_items.begin(), stream_items.end(), id) -
                               stream_items.begin());
        };
        d_timestamp = index(d_config.timestamp_item);
        d_substream =
            d_config.substream_item == 0 ? none : index(d_config.substream_item);
    }

    void place(chunk_place_data* data, std::size_t) override
    {
        const std::int64_t timestamp = data->items[d_timestamp];
        if (timestamp < 0 || std::uint64_t(timestamp) % d_config.timestamp_step != 0)
            return; // absent or misaligned: rejected (chunk_id stays -1)
        std::uint64_t substream = 0;
        if (d_substream != none) {
            const std::int64_t value = data->items[d_substream];
            if (value < 0)
                return;
            substream = d_taken.index_of(std::uint64_t(value));
            if (substream == substream_set::npos)
                return;
        }
        const std::uint64_t position = std::uint64_t(timestamp) / d_config.timestamp_step;
        const std::uint64_t in_chunk = position % d_config.heaps_per_chunk;
        data->chunk_id = std::int64_t(position / d_config.heaps_per_chunk);
        data->heap_index = std::size_t(in_chunk * d_config.substreams + substream);
        data->heap_offset = data->heap_index * d_config.heap_bytes;
    }

private:
    static constexpr std::size_t none = ~std::size_t(0);
    declarative_placement_config d_config;
    substream_set d_taken; //!< substream value -> index
    std::size_t d_timestamp = 0;
    std::size_t d_substream = none;
};

} // namespace

std::shared_ptr<chunk_placement_policy>
make_declarative_placement(const declarative_placement_config& config)
{
    return std::make_shared<declarative_placement>(config);
}

} // namespace recv
} // namespace spead
} // namespace gr
