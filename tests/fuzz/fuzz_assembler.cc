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
// or heap memory above the configured caps.

#include "protocol/heap_assembler.h"
#include <cstdio>
#include <cstdlib>

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

void inspect(const heap& h)
{
    const std::uint8_t* begin = h.payload();
    const std::uint8_t* end = begin + h.size();
    check(h.size() <= max_heap_size, "heap above max_heap_size delivered");
    check(h.received_bytes() <= h.size(), "more bytes received than the heap holds");
    volatile std::uint8_t sum = 0;
    for (const item& it : h.items()) {
        if (it.is_immediate) {
            check(it.length == std::size_t(h.get_flavour().heap_address_bytes()),
                  "immediate width differs from the flavour");
        } else {
            check(it.data >= begin && it.data + it.length <= end,
                  "item outside its heap");
        }
        for (std::size_t i = 0; i < it.length; i++) // let ASan see every byte
            sum = sum + it.data[i];
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
    {
        heap_assembler assembler(config, pool, [&delivered](heap&& h) {
            delivered++;
            inspect(h);
        });
        std::size_t pos = 1;
        while (pos + 2 <= size) {
            const std::size_t length = (std::size_t(data[pos]) << 8) | data[pos + 1];
            pos += 2;
            const std::size_t n = std::min(length, size - pos);
            // a private copy so ASan flags reads past the datagram, not just the input
            std::unique_ptr<std::uint8_t[]> datagram(new std::uint8_t[n ? n : 1]);
            std::copy(data + pos, data + pos + n, datagram.get());
            assembler.add_packet(datagram.get(), n);
            datagrams++;
            pos += n;
            check(assembler.live_heaps() <= config.max_heaps, "window above max_heaps");
        }
        assembler.stop();
        const recv_stats& s = assembler.stats();
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
