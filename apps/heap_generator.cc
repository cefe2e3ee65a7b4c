/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "heap_generator.h"
#include "verify_pattern.h"
#include <gnuradio/spead/descriptor.h>
#include <condition_variable>
#include <boost/asio/error.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace apps {

namespace {

/*! spead2_send's items are arrays of big-endian uint32 ('>u4'), whose values
 * --verify fills in (verify_pattern.h). */
constexpr std::size_t element_size = 4;
/*! Most test items a heap may have (ids 0x1000 up). */
constexpr std::size_t max_items = 0x10000;

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
    if (config.items == 0 || config.items >= max_items)
        throw std::invalid_argument("--items: " + std::to_string(config.items) +
                                    " is out of range; use 1 to " +
                                    std::to_string(max_items - 1));
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
            make_numpy_header(">u4", { static_cast<std::int64_t>(elements) });
        d_descriptor_heap.add_descriptor(d);
    }
    d_stop_heap.add_end();

    // Each heap in flight has buffers of its own, as spead2_send's (max_heaps x
    // heap_size of storage, faulted in before the first send: these are zeroed here),
    // so the transport reads as much memory as a real sender's. One buffer shared by
    // every heap stays in the cache: it made spead_send look faster than spead2_send
    // and than spead.sink, whose heaps come from GNU Radio's buffers, and is kept for
    // a load generator only (one_buffer).
    const bool shared = config.one_buffer && !config.verify;
    for (std::size_t s = 0; s < config.max_heaps; s++) {
        auto sl = std::make_unique<slot>(d_flavour);
        if (!shared || s == 0)
            sl->buffers.assign(config.items, std::vector<std::uint8_t>(d_item_size));
        else
            sl->shared = d_slots.front().get();
        build_data_heap(*sl, s);
        d_slots.push_back(std::move(sl));
    }
}

void heap_generator::build_data_heap(slot& sl, std::uint64_t k) const
{
    sl.heap = send::heap(d_flavour);
    if (d_config.timestamp_item != 0) {
        // Modulo the immediate's width: a long run wraps (a receiver resyncs) rather
        // than failing.
        const std::uint64_t mask =
            (std::uint64_t(1) << d_flavour.heap_address_bits()) - 1;
        sl.heap.add_immediate(d_config.timestamp_item, (k * heap_payload()) & mask);
        sl.heap.set_repeat_immediates(true);
    }
    for (std::size_t i = 0; i < d_config.items; i++)
        sl.heap.add_item(first_item_id + i,
                         (sl.shared ? sl.shared->buffers : sl.buffers)[i].data(),
                         d_item_size);
}

generator_result heap_generator::run(send::stream& stream,
                                     boost::asio::io_context& io,
                                     const std::atomic<bool>& interrupted)
{
    using clock = std::chrono::steady_clock;
    /*
     * What to send is a sequence: [descriptors to every substream], data heap 0, 1, ...
     * (descriptors again every descriptor_interval data heaps), then a stop heap to
     * every substream. pump() queues the next heaps of the sequence while fewer than
     * max_heaps are in flight; it runs once here and then from every completion
     * handler. Handlers may run on this thread (inside io.run_one_for) or, when the
     * stream completes inline, on its writer thread: then the writer refills its own
     * queue and never waits for this thread to be scheduled.
     */
    generator_result result;
    const std::size_t substreams = stream.get_num_substreams();
    std::mutex mutex; // everything below, and queueing
    std::condition_variable finished;
    std::size_t in_flight = 0;
    std::uint64_t cnt = d_config.first_cnt;
    std::uint64_t k = 0;              // next data heap
    std::size_t descriptors_left = 0; // descriptor heaps due before data heap k
    std::size_t stop_left = 0;        // stop heaps still to queue
    bool data_done = false;           // no more data heaps
    bool all_queued = false;          // nothing more will be queued
    std::uint64_t described_k = 0;    // data heap the last resend came before
    if (d_config.descriptors)
        descriptors_left = substreams;

    std::function<void()> pump;
    auto on_complete = [&](slot* sl, bool data) {
        return [&, sl, data](const boost::system::error_code& ec, std::size_t bytes) {
            std::lock_guard<std::mutex> lock(mutex);
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
            pump();
            if (all_queued && in_flight == 0)
                finished.notify_all();
        };
    };
    auto queue = [&](const send::heap& h, std::size_t substream, slot* sl, bool data) {
        in_flight++;
        if (sl)
            sl->busy = true;
        stream.async_send_heap(
            h, on_complete(sl, data), static_cast<std::int64_t>(cnt++), substream);
    };
    // Called with the mutex held.
    pump = [&] {
        while (!all_queued && in_flight < d_config.max_heaps) {
            if (descriptors_left > 0) {
                queue(d_descriptor_heap, substreams - descriptors_left, nullptr, false);
                descriptors_left--;
                continue;
            }
            if (!data_done) {
                if ((d_config.heaps >= 0 &&
                     k >= static_cast<std::uint64_t>(d_config.heaps)) ||
                    interrupted.load(std::memory_order_relaxed) || result.error) {
                    data_done = true;
                    stop_left = d_config.stop_heap && !result.error ? substreams : 0;
                    continue;
                }
                if (d_config.descriptors && d_config.descriptor_interval > 0 && k > 0 &&
                    k % d_config.descriptor_interval == 0 && described_k != k) {
                    descriptors_left = substreams;
                    described_k = k;
                    continue;
                }
                slot& sl = *d_slots[k % d_slots.size()];
                if (sl.busy)
                    return; // its heap is still in flight: the next completion comes back
                if (d_config.verify) {
                    // spead2's rule: heap cnt c starts at elements x items x (c - 1),
                    // counting every item, a timestamp too (spead2_recv then takes
                    // one of 0x1000 or more for a test item, of the wrong length).
                    const std::size_t elements = d_item_size / element_size;
                    const std::size_t items =
                        sl.buffers.size() + (d_config.timestamp_item != 0);
                    const std::uint64_t start = elements * items * (cnt - 1);
                    for (std::size_t i = 0; i < sl.buffers.size(); i++)
                        fill_pattern(
                            sl.buffers[i].data(), elements, start + i * elements);
                }
                if (d_config.timestamp_item != 0)
                    build_data_heap(sl, k);
                queue(sl.heap, k % substreams, &sl, true);
                k++;
                continue;
            }
            if (stop_left > 0) {
                queue(d_stop_heap, substreams - stop_left, nullptr, false);
                stop_left--;
                continue;
            }
            all_queued = true;
        }
    };

    // Completions are posted to io unless the stream completes inline; running it here
    // keeps every posted handler on this thread.
    auto guard = boost::asio::make_work_guard(io);
    io.restart();
    const auto start = clock::now();
    {
        std::lock_guard<std::mutex> lock(mutex);
        pump();
    }
    const bool inline_completions = stream.get_config().get_inline_completions();
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex);
            if (!data_done &&
                (interrupted.load(std::memory_order_relaxed) || result.error))
                pump();             // stops queueing data even while nothing completes
            if (inline_completions) // wake now and then to notice an interruption
                finished.wait_for(lock, std::chrono::milliseconds(20), [&] {
                    return all_queued && in_flight == 0;
                });
            if (all_queued && in_flight == 0)
                break;
        }
        // Refused heaps' handlers are posted even with inline completions.
        if (inline_completions)
            io.poll();
        else
            io.run_one_for(std::chrono::milliseconds(20));
    }
    result.seconds = std::chrono::duration<double>(clock::now() - start).count();
    return result;
}

} // namespace apps
} // namespace spead
} // namespace gr
