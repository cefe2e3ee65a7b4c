/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_CHUNK_PLACEMENT_H
#define INCLUDED_SPEAD_STREAMS_CHUNK_PLACEMENT_H

#include "chunk_queue.h"
#include "heap_placement.h"
#include "lock_profile.h"
#include "placement.h"
#include "protocol/chunk_assembler.h"
#include <gnuradio/spead/recv_stream_config.h>
#include <condition_variable>
#include <atomic>
#include <memory>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*! The chunk assembler of a continuous stream whose data heaps hold \p heap_bytes. */
chunk_config chunk_config_for(const continuous_config& c,
                              std::size_t heap_bytes,
                              incomplete_heaps incomplete);

/*!
 * \brief Chunk placement (continuous streams): data heaps, the ones carrying the
 * timestamp item, are copied by chunk_assembler straight to their position in a
 * chunk, which waits for the consumer in a chunk_queue; the other heaps (descriptors,
 * stream control) go to a heap placement.
 *
 * With several readers, each decodes its batch before taking the lock and copies
 * payloads outside it (reserve, copy, commit); docs/dev-recv-locking.md describes the
 * drain that keeps a position from being released while a copy into it is in flight.
 */
class chunk_placement final : public placement
{
public:
    chunk_placement(stream_core& core, const stream_config& config);

    bool
    add_batch(const packet_view* packets, std::size_t n, std::size_t source) override;
    void end_source(std::size_t source) override;
    void drain_locked(std::unique_lock<std::mutex>& lock) override;
    void flush_locked() override;
    void wake_all_locked() override;
    std::size_t wait_for_queue_space(std::chrono::microseconds timeout) override;
    void add_stats_locked(recv_stats& out) const override;
    heap_placement& heaps() override { return d_control; }
    chunk_queue* chunks() override { return &d_chunks; }
    std::size_t heap_bytes() const override { return d_heap_bytes.load(); }

private:
    /*! A reader thread's batch: decoded before the stream's lock is taken, and the
     * copies to make once it is released. */
    struct batch;
    /*! How a run of place_run() ended. */
    enum class run_end {
        batch_done,  //!< every packet placed
        drain,       //!< the packet at the index must wait for the copies in flight
        reader_ends, //!< its sender said stop: the rest of the batch is counted
    };

    /*! Decodes the whole batch (several readers: before the lock, in parallel). */
    static void decode_all(batch& b, const packet_view* packets, std::size_t n);
    /*! Waits (mutex held) until no other reader is draining: they go first. */
    void wait_for_drainers(std::unique_lock<std::mutex>& lock);
    /*! Places packets from \p i on, until the batch ends, one needs a drain, or a
     * stop heap ends the reader; \p i is left at the packet to offer next. */
    run_end place_run(std::unique_lock<std::mutex>& lock,
                      batch& b,
                      const packet_view* packets,
                      std::size_t n,
                      std::size_t source,
                      std::size_t& i);
    /*! The payload copies place_run() reserved: made outside the lock, then
     * committed under it. */
    void copy_and_commit(std::unique_lock<std::mutex>& lock, batch& b);
    /*! The stop heaps \p control (the source's control assembler) counted changed
     * since \p stop_heaps_seen: this reader's sender said stop. */
    bool stop_heap_came(const heap_assembler& control,
                        std::uint64_t& stop_heaps_seen) const;
    /*! Makes the chunk assembler from the first data heap's packet (mutex held);
     * false when \p packet is not a data heap's. */
    bool make_assembler_locked(std::unique_lock<std::mutex>& lock,
                               const packet_header& packet);
    /*! A data heap that cannot set the stream's shape: counted, said once. */
    void refuse_shape(const packet_header& packet);

    const stream_config d_config;
    heap_placement d_control; //!< heaps without the timestamp item
    chunk_queue d_chunks;     //!< its own lock, taken after the stream's
    std::unique_ptr<chunk_assembler> d_assembler; //!< made at the first data heap
    std::atomic<std::size_t> d_heap_bytes{ 0 };
    /*! The assembler's live_chunks(), once it is made (0 before): read without the
     * lock by wait_for_queue_space(). */
    std::atomic<std::size_t> d_live_chunks{ 0 };
    recv_stats d_stats; //!< packets refused before reaching either assembler
    bool d_heap_size_warned = false;
    /*! The last copy in flight was committed, or a drain ended. */
    std::condition_variable d_copies_done;
    std::size_t d_drain_waiters = 0; //!< threads in drain_locked()
    lock_profile d_profile; //!< the readers' use of the lock (a measuring build only)
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_CHUNK_PLACEMENT_H */
