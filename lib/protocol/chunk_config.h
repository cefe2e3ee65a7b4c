/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_CHUNK_CONFIG_H
#define INCLUDED_SPEAD_PROTOCOL_CHUNK_CONFIG_H

#include "timeline.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_heap.h>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace spead {

/*! A time-continuous stream's heaps: what identifies them and how big they are. */
struct SPEAD_API chunk_config {
    timeline_config timeline;
    /*! HEAP_SIZE of every data heap: its payload is copied whole to its position. */
    std::size_t heap_bytes = 0;
    /*! Immediate item holding the heap's timestamp (> 0). Packets without it belong to
     * other heaps (descriptors, stream control) and are left to the caller. */
    std::uint64_t timestamp_item = 0;
    /*! Immediate item naming the heap's substream; 0: every heap is substream 0. */
    std::uint64_t substream_item = 0;
    /*! The substream placed at index 0: substreams first_substream .. + substreams
     * - 1 are taken, heaps of others counted in heaps_other_substream. */
    std::uint64_t first_substream = 0;
    /*! Or the substreams taken, one per index in that order (first_substream 0);
     * empty: the range above. See substream_set. */
    std::vector<std::uint64_t> substream_ids;
    /*! Separate received ranges per heap before a packet is refused; 0: automatic,
     * as the heap assembler's (fragment_limit::choose() of heap_bytes). */
    std::size_t max_fragments = 0;
    /*! Positions per chunk; 0: about 1 MiB of each substream, at most a quarter of
     * the window (see positions_per_chunk()). */
    std::size_t chunk_positions = 0;
    /*! drop: an incomplete heap is output as zeros; deliver: as received, the missing
     * bytes zeroed. */
    recv::incomplete_heaps incomplete = recv::incomplete_heaps::drop;
    /*! Payloads are copied with non-temporal stores (memcpy_nontemporal()). */
    bool nontemporal_copies = false;

    /*! \throws std::invalid_argument naming the field, the value and the fix */
    void validate() const;
    /*! chunk_positions, or the automatic choice when it is 0. */
    std::size_t positions_per_chunk() const;
    /*! Chunks the window can touch at once: ceil(window / positions) + 1. */
    std::size_t live_chunks() const;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_CHUNK_CONFIG_H */
