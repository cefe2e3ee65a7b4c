/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_CHUNK_RING_PLACEMENT_H
#define INCLUDED_SPEAD_STREAMS_CHUNK_RING_PLACEMENT_H

#include "heap_placement.h"
#include "placement.h"
#include "protocol/chunk_stream_assembler.h"
#include <gnuradio/spead/recv_chunk_stream.h>
#include <memory>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief spead2's chunk streams as a placement: every heap goes through the chunk
 * stream assembler into chunks from the setup's acquire (a ring stream's free ring, a
 * group member's group), which leave through its ready (the data ring, the group).
 * Both may block the reader, as spead2's (stop() stops the rings before the stream,
 * so a waiting reader lets go).
 */
class chunk_ring_placement final : public placement
{
public:
    chunk_ring_placement(stream_core& core, const stream_config& config);

    bool
    add_batch(const packet_view* packets, std::size_t n, std::size_t source) override;
    void flush_locked() override;
    void wake_all_locked() override { d_no_heaps.wake_all_locked(); }
    std::size_t wait_for_queue_space(std::chrono::microseconds timeout) override;
    void add_stats_locked(recv_stats& out) const override;
    /*! A chunk stream pops no heaps: pop() waits for the end. */
    heap_placement& heaps() override { return d_no_heaps; }

private:
    /*! Moves the window on to what a group asked for (once per batch). */
    void serve_flush_request();

    std::shared_ptr<chunk_stream_setup> d_setup;
    heap_placement d_no_heaps;
    std::unique_ptr<chunk_stream_assembler> d_assembler;
    bool d_stop_on_stop_heap;
    bool d_ended = false;
    std::uint64_t d_batches = 0;
    std::uint64_t d_max_batch = 0;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_CHUNK_RING_PLACEMENT_H */
