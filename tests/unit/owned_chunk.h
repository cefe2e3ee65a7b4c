/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TEST_OWNED_CHUNK_H
#define INCLUDED_SPEAD_TEST_OWNED_CHUNK_H

#include <gnuradio/spead/recv_chunk_stream.h>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace spead_test {

/*! The layout of the chunk stream tests' heaps: a timestamp in item 0x1600, 64 bytes
 * of payload, 4 heaps to a chunk. */
constexpr std::uint64_t ts_item = 0x1600;
constexpr std::size_t heap_bytes = 64;
constexpr std::size_t heaps_per_chunk = 4;

/*! A chunk of a chunk stream with its own buffers: \p heaps heaps of \p heap_bytes,
 * one present byte per heap, \p extra_bytes of extra. */
struct owned_chunk : gr::spead::recv::stream_chunk {
    owned_chunk(std::size_t heaps, std::size_t heap_bytes, std::size_t extra_bytes = 0)
        : bytes(heaps * heap_bytes), flags(heaps), extras(extra_bytes)
    {
        data = bytes.data();
        data_size = bytes.size();
        present = flags.data();
        present_size = flags.size();
        extra = extras.empty() ? nullptr : extras.data();
        extra_size = extras.size();
    }
    std::vector<std::uint8_t> bytes, flags, extras;
};

} // namespace spead_test

#endif
