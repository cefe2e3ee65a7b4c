/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_PAYLOAD_COPY_H
#define INCLUDED_SPEAD_PROTOCOL_PAYLOAD_COPY_H

// How the assemblers copy a packet's payload to its place: memcpy, or the
// non-temporal copy a stream asks for (spead2's MEMCPY_NONTEMPORAL).

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstring>

namespace gr {
namespace spead {

/*!
 * Copies with stores that bypass the cache (x86-64: SSE2 streaming stores; elsewhere
 * memcpy): the destination is not pulled into the cache, so payloads a consumer reads
 * much later, or on another core, do not evict what the receiving core is using.
 * Ends with a store fence, so the bytes are visible to other threads as after memcpy.
 */
SPEAD_API void memcpy_nontemporal(void* dst, const void* src, std::size_t n);

/*! The assemblers' one copy of a payload. */
inline void copy_payload(bool nontemporal, void* dst, const void* src, std::size_t n)
{
    if (nontemporal)
        memcpy_nontemporal(dst, src, n);
    else
        std::memcpy(dst, src, n);
}

} // namespace spead
} // namespace gr

#endif
