/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_packets.h"
#include "bench_sender.h"
#include "protocol/packetiser.h"
#include <gnuradio/spead/send_heap.h>
#include <sys/resource.h>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {

/*! Heap \p k of the packet set: the value item and the timestamp item (in the first
 * packet; with several substreams it and the substream item are in every packet, so
 * that each thread's packets place on their own). */
send::heap bench_heap(const std::vector<std::uint8_t>& value,
                      std::size_t k,
                      const heap_numbering& numbering)
{
    send::heap h;
    h.add_item(0x1000, value.data(), value.size());
    if (numbering.timestamped) {
        h.add_immediate(bench_timestamp_item, k * value.size());
        if (numbering.substreams > 1) {
            h.add_immediate(substream_item, numbering.substream);
            h.set_repeat_immediates(true);
        }
    }
    return h;
}

} // namespace

packet_set make_packets(std::size_t heap_size,
                        std::size_t packet_size,
                        std::uint64_t total,
                        const heap_numbering& numbering)
{
    packet_set set;
    std::vector<std::uint8_t> value(heap_size);
    std::minstd_rand rng;
    for (auto& b : value)
        b = std::uint8_t(rng());
    const send::heap h = bench_heap(value, 0, numbering);

    const std::size_t heaps = std::max<std::uint64_t>(1, total / heap_size);
    // size the buffer once: the packetiser's own arithmetic decides the packet count
    std::vector<std::uint8_t> header(packet_size);
    std::vector<send::packet_piece> pieces;
    std::size_t per_heap = 0;
    {
        send::packet_generator gen(h, 1, packet_size);
        while (gen.has_next()) {
            pieces.clear();
            gen.next(header.data(), pieces);
            per_heap++;
        }
    }
    set.bytes.resize(heaps * per_heap * packet_size);
    std::vector<std::size_t> offsets;
    std::size_t pos = 0;
    for (std::size_t k = 0; k < heaps; k++) {
        const send::heap hc = bench_heap(value, k, numbering);
        const std::size_t cnt = k * numbering.substreams + numbering.substream + 1;
        send::packet_generator gen(hc, cnt, packet_size);
        while (gen.has_next()) {
            pieces.clear();
            const std::size_t size = gen.next(header.data(), pieces);
            std::uint8_t* out = set.bytes.data() + pos;
            const std::size_t header_size = pieces[0].length;
            std::uint64_t payload_offset = 0;
            for (std::size_t b = 0; b < 8; b++) // HEAP_OFFSET: low 5 bytes of 3rd pointer
                payload_offset = (payload_offset << 8) | header.data()[8 + 16 + b];
            payload_offset &= (std::uint64_t(1) << 40) - 1;
            set.copies.push_back({ header_size, std::size_t(payload_offset) });
            for (const auto& piece : pieces) {
                std::memcpy(out, piece.data, piece.length);
                out += piece.length;
            }
            offsets.push_back(pos);
            set.packets.push_back({ nullptr, size });
            set.packet_bytes += size;
            pos += size;
        }
        set.payload_bytes += heap_size;
    }
    for (std::size_t i = 0; i < set.packets.size(); i++)
        set.packets[i].data = set.bytes.data() + offsets[i];
    set.heaps = heaps;
    return set;
}

std::uint64_t thread_page_faults()
{
    rusage use{};
    getrusage(RUSAGE_THREAD, &use);
    return std::uint64_t(use.ru_minflt + use.ru_majflt);
}

copy_buffers make_copy_buffers(std::size_t heap_size)
{
    return copy_buffers(copy_ring, std::vector<std::uint8_t>(heap_size));
}

timed_pass memcpy_pass(const packet_set& set, copy_buffers& ring)
{
    const std::size_t heap_size = ring[0].size();
    std::size_t heap_index = 0;
    const pass_timer timer;
    for (std::size_t i = 0; i < set.packets.size(); i++) {
        const auto& p = set.packets[i];
        const auto& c = set.copies[i];
        const std::size_t length = p.size - c.payload_start;
        std::memcpy(ring[heap_index % ring.size()].data() + c.heap_offset,
                    p.data + c.payload_start,
                    length);
        if (c.heap_offset + length == heap_size)
            heap_index++;
    }
    const timed_pass pass = timer.done();
    volatile std::uint8_t sink = ring[0][heap_size / 2];
    (void)sink;
    return pass;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
