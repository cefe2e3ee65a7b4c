/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// libFuzzer target over the packet decoder, the heap assembler and descriptor decoding:
// everything that hostile network input reaches before a heap is handed on.
//
// Input: byte 0 picks the configuration (bits 0-2: max_heaps - 1, bit 3: deliver
// incomplete heaps, bit 4: stop on stop heaps); then records of a 2-byte big-endian
// length and that many bytes, each one datagram. tests/fuzz/make_seeds.py turns the
// spead2 captures into seeds of this form.
//
// Beyond crashes, leaks and UB (ASan+UBSan), it aborts when an invariant breaks: a
// datagram not accounted for by exactly one counter, an item pointing outside its heap,
// or heap memory above the configured caps. A second assembler takes every datagram
// the slow way (decode_packet, then add_decoded) as the reference: the fast paths of
// add_packet must deliver the same heaps and count the same.

#include "general_path.h"
#include "protocol/heap_assembler.h"
#include <sanitizer/asan_interface.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace gr::spead;
using namespace gr::spead::recv;

namespace {

constexpr std::size_t max_heap_size = 1 << 20;
constexpr std::size_t pool_heaps = 4;

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "invariant broken: %s\n", what);
        std::abort();
    }
}

/*! What a delivered heap holds, for comparing the two assemblers. */
struct heap_summary {
    std::uint64_t cnt, size, received, payload_hash;
    bool complete;
    std::vector<std::uint64_t> items; //!< id, immediate flag, offset or value, length

    bool operator==(const heap_summary& o) const
    {
        return cnt == o.cnt && size == o.size && received == o.received &&
               payload_hash == o.payload_hash && complete == o.complete &&
               items == o.items;
    }
};

heap_summary summarise(const heap& h)
{
    // FNV-1a over 8-byte words: heaps reach 1 MiB, and a byte-wise hash of every
    // delivered heap (twice) was most of an execution's time.
    std::uint64_t hash = 14695981039346656037ull;
    std::uint64_t i = 0;
    for (; i + 8 <= h.size(); i += 8) {
        std::uint64_t word;
        std::memcpy(&word, h.payload() + i, 8);
        hash = (hash ^ word) * 1099511628211ull;
    }
    for (; i < h.size(); i++)
        hash = (hash ^ h.payload()[i]) * 1099511628211ull;
    heap_summary out{ h.cnt(), h.size(), h.received_bytes(), hash, h.is_complete(), {} };
    for (const item& it : h.items()) {
        out.items.push_back(it.id);
        out.items.push_back(it.is_immediate);
        out.items.push_back(it.is_immediate ? it.immediate_value
                                            : std::uint64_t(it.data - h.payload()));
        out.items.push_back(it.length);
    }
    return out;
}

void inspect(const heap& h)
{
    const std::uint8_t* begin = h.payload();
    const std::uint8_t* end = begin + h.size();
    check(h.size() <= max_heap_size, "heap above max_heap_size delivered");
    check(h.received_bytes() <= h.size(), "more bytes received than the heap holds");
    for (const item& it : h.items()) {
        if (it.is_immediate) {
            check(it.length == std::size_t(h.get_flavour().heap_address_bytes()),
                  "immediate width differs from the flavour");
        } else {
            check(it.data >= begin && it.data + it.length <= end,
                  "item outside its heap");
        }
        // every byte must be addressable (ASan's shadow, not a read of each byte)
        check(!__asan_region_is_poisoned(const_cast<std::uint8_t*>(it.data), it.length),
              "item bytes not addressable");
    }
    (void)h.descriptors(false);
    (void)h.descriptors(true);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    assembler_config config;
    config.max_heaps = 1 + (data[0] & 7);
    config.incomplete =
        (data[0] & 8) ? incomplete_heaps::deliver : incomplete_heaps::drop;
    config.stop_on_stop_heap = data[0] & 16;
    config.max_heap_size = max_heap_size;
    config.max_item_pointers = 4096;
    config.retired_history = 8;
    auto pool = detail::heap_pool::create(pool_heaps);
    std::size_t delivered = 0;
    std::uint64_t datagrams = 0;
    std::vector<heap_summary> fast_heaps, reference_heaps;
    {
        heap_assembler assembler(config, pool, [&delivered, &fast_heaps](heap&& h) {
            delivered++;
            inspect(h);
            fast_heaps.push_back(summarise(h));
        });
        heap_assembler reference(
            config, detail::heap_pool::create(pool_heaps), [&reference_heaps](heap&& h) {
                reference_heaps.push_back(summarise(h));
            });
        std::size_t pos = 1;
        while (pos + 2 <= size) {
            const std::size_t length = (std::size_t(data[pos]) << 8) | data[pos + 1];
            pos += 2;
            const std::size_t n = std::min(length, size - pos);
            // a private copy so ASan flags reads past the datagram, not just the input
            std::unique_ptr<std::uint8_t[]> datagram(new std::uint8_t[n ? n : 1]);
            std::copy(data + pos, data + pos + n, datagram.get());
            const bool running = assembler.add_packet(datagram.get(), n);
            check(running ==
                      spead_test::add_by_general_path(reference, datagram.get(), n),
                  "add_packet and the general path disagree");
            datagrams++;
            pos += n;
            check(assembler.live_heaps() <= config.max_heaps, "window above max_heaps");
        }
        assembler.stop();
        reference.stop();
        const recv_stats& s = assembler.stats();
        for (std::size_t i = 0; i < recv_stats::size; i++)
            check(s[recv_stat(i)] == reference.stats()[recv_stat(i)],
                  "the fast paths count differently");
        check(fast_heaps == reference_heaps, "the fast paths deliver different heaps");
        check(datagrams == s[recv_stat::packets] + s[recv_stat::packets_truncated] +
                               s[recv_stat::packets_size_mismatch] +
                               s[recv_stat::packets_bad_header] +
                               s[recv_stat::packets_bad_specials] +
                               s[recv_stat::packets_bad_offset] +
                               s[recv_stat::packets_after_stop],
              "a datagram is not accounted for exactly once");
        check(delivered == s[recv_stat::heaps] + s[recv_stat::incomplete_heaps_delivered],
              "delivered heaps differ from their counters");
        check(assembler.live_heaps() == 0, "stop() left live heaps");
    }
    check(pool->retained() <= pool_heaps, "pool keeps more storage than its cap");
    return 0;
}
