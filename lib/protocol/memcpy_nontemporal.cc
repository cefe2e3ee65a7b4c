/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// memcpy_nontemporal: a copy with streaming stores.

#include "payload_copy.h"
#include <algorithm>
#include <cstdint>
#if defined(__x86_64__) || defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gr {
namespace spead {

void memcpy_nontemporal(void* dst, const void* src, std::size_t n)
{
#if defined(__x86_64__) || defined(__SSE2__)
    auto* out = static_cast<std::uint8_t*>(dst);
    const auto* in = static_cast<const std::uint8_t*>(src);
    // Streaming stores want 16-byte aligned destinations: the head goes by memcpy.
    const std::size_t head =
        std::min(n, std::size_t((16 - reinterpret_cast<std::uintptr_t>(out) % 16) % 16));
    std::memcpy(out, in, head);
    out += head;
    in += head;
    n -= head;
    for (; n >= 64; n -= 64, in += 64, out += 64) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 32));
        const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 48));
        _mm_stream_si128(reinterpret_cast<__m128i*>(out), a);
        _mm_stream_si128(reinterpret_cast<__m128i*>(out + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i*>(out + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i*>(out + 48), d);
    }
    for (; n >= 16; n -= 16, in += 16, out += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(out),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
    std::memcpy(out, in, n);
    _mm_sfence(); // streaming stores are weakly ordered: publish them
#else
    std::memcpy(dst, src, n);
#endif
}

} // namespace spead
} // namespace gr
