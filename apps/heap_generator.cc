/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "heap_generator.h"
#include "payload_pattern.h"
#include <gnuradio/spead/descriptor.h>
#include <boost/asio/error.hpp>
#include <chrono>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace apps {

namespace {

/*! spead2_send's items are arrays of complex64 (two floats). */
constexpr std::size_t element_size = 8;

flavour make_flavour(const generator_config& config)
{
    try {
        return flavour(config.addr_bits, config.pyspead);
    } catch (const std::invalid_argument&) {
        throw std::invalid_argument("--addr-bits: " + std::to_string(config.addr_bits) +
                                    " is not supported; use a multiple of 8 from 8 to "
                                    "56 (40 for SPEAD-64-40, 48 for SPEAD-64-48)");
    }
}

} // namespace

heap_generator::heap_generator(const generator_config& config)
    : d_config(config),
      d_flavour(make_flavour(config)),
      d_descriptor_heap(d_flavour),
      d_stop_heap(d_flavour)
{
    if (config.items == 0 || config.items >= max_pattern_items)
        throw std::invalid_argument("--items: " + std::to_string(config.items) +
                                    " is out of range; use 1 to " +
                                    std::to_string(max_pattern_items - 1));
    if (config.max_heaps == 0)
        throw std::invalid_argument("--max-heaps: must be at least 1");
    const std::size_t elements = config.heap_size / (config.items * element_size);
    if (elements == 0)
        throw std::invalid_argument(
            "--heap-size: " + std::to_string(config.heap_size) + " bytes cannot hold " +
            std::to_string(config.items) + " items of at least one " +
            std::to_string(element_size) + "-byte element; use at least " +
            std::to_string(config.items * element_size));
    d_item_size = elements * element_size;

    for (std::size_t i = 0; i < config.items; i++) {
        descriptor d;
        d.id = first_item_id + i;
        d.name = "Test item " + std::to_string(i);
        d.description = "A test item with arbitrary value";
        d.numpy_header =
            make_numpy_header("<c8", { static_cast<std::int64_t>(elements) });
        d_descriptor_heap.add_descriptor(d);
    }
    d_stop_heap.add_end();

    if (!config.verify)
        d_zeros.assign(d_item_size, 0);
    for (std::size_t s = 0; s < config.max_heaps; s++) {
        auto sl = std::make_unique<slot>(d_flavour);
        sl->buffers.reserve(config.items);
        for (std::size_t i = 0; i < config.items; i++) {
            const std::uint8_t* value = d_zeros.data();
            if (config.verify) {
                sl->buffers.emplace_back(d_item_size);
                value = sl->buffers.back().data();
            }
            sl->heap.add_item(first_item_id + i, value, d_item_size);
        }
        d_slots.push_back(std::move(sl));
    }
}

generator_result heap_generator::run(send::stream& stream,
                                     boost::asio::io_context& io,
                                     const std::atomic<bool>& interrupted)
{
    using clock = std::chrono::steady_clock;
    generator_result result;
    const std::size_t substreams = stream.get_num_substreams();
    std::size_t in_flight = 0;
    std::uint64_t cnt = d_config.first_cnt;

    // Completions are posted to io; running it here keeps everything on one thread.
    auto guard = boost::asio::make_work_guard(io);
    io.restart();
    auto wait_until = [&io](auto ready) {
        while (!ready())
            io.run_one_for(std::chrono::milliseconds(100));
    };
    auto queue = [&](const send::heap& h, std::size_t substream, slot* sl, bool data) {
        wait_until([&] { return in_flight < d_config.max_heaps; });
        in_flight++;
        if (sl)
            sl->busy = true;
        stream.async_send_heap(
            h,
            [&result, &in_flight, sl, data](const boost::system::error_code& ec,
                                            std::size_t bytes) {
                in_flight--;
                if (sl)
                    sl->busy = false;
                result.bytes += bytes;
                if (ec) {
                    result.heaps_failed++;
                    if (!result.error)
                        result.error = ec;
                } else {
                    (data ? result.data_heaps : result.control_heaps)++;
                }
            },
            static_cast<std::int64_t>(cnt++),
            substream);
    };
    auto send_descriptors = [&] {
        for (std::size_t s = 0; s < substreams; s++)
            queue(d_descriptor_heap, s, nullptr, false);
    };

    const auto start = clock::now();
    if (d_config.descriptors)
        send_descriptors();
    for (std::uint64_t k = 0;
         d_config.heaps < 0 || k < static_cast<std::uint64_t>(d_config.heaps);
         k++) {
        if (interrupted.load(std::memory_order_relaxed) || result.error)
            break;
        if (d_config.descriptors && d_config.descriptor_interval > 0 && k > 0 &&
            k % d_config.descriptor_interval == 0)
            send_descriptors();
        slot& sl = *d_slots[k % d_slots.size()];
        wait_until([&sl] { return !sl.busy; });
        if (d_config.verify)
            for (std::size_t i = 0; i < sl.buffers.size(); i++)
                fill_pattern(sl.buffers[i].data(), sl.buffers[i].size(), cnt, i);
        queue(sl.heap, k % substreams, &sl, true);
    }
    if (d_config.stop_heap && !result.error)
        for (std::size_t s = 0; s < substreams; s++)
            queue(d_stop_heap, s, nullptr, false);
    wait_until([&in_flight] { return in_flight == 0; });
    result.seconds = std::chrono::duration<double>(clock::now() - start).count();
    return result;
}

} // namespace apps
} // namespace spead
} // namespace gr
