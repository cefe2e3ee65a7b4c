/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_HEAP_ASSEMBLER_H
#define INCLUDED_SPEAD_PROTOCOL_HEAP_ASSEMBLER_H

#include "assembler_config.h"
#include "cnt_index.h"
#include "fragment_limit.h"
#include "heap_pool.h"
#include "packet_decoder.h"
#include "recent_heaps.h"
#include "repeat_header.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_heap.h>
#include <gnuradio/spead/stats.h>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Turns SPEAD packets into heaps: no I/O, no threads, no allocation per packet.
 *
 * Packets of a heap may come in any order and interleaved with other heaps. A heap
 * stays live until it completes or until max_heaps newer heaps have started, whichever
 * comes first (so at most max_heaps are live, and a heap that lost a packet leaves
 * after max_heaps more heaps however many of them completed). Each
 * packet ends in exactly one counter (see docs/statistics.md). Not thread-safe: the
 * owner serialises calls.
 */
class SPEAD_API heap_assembler
{
public:
    using heap_ready = std::function<void(heap&&)>;

    heap_assembler(const assembler_config& config,
                   std::shared_ptr<detail::heap_pool> pool,
                   heap_ready ready);
    ~heap_assembler();

    heap_assembler(const heap_assembler&) = delete;
    heap_assembler& operator=(const heap_assembler&) = delete;

    /*! Decodes and places one packet. Returns false once the stream has stopped: for
     * the packet that completed a stop heap, and for every packet after it (those are
     * counted in packets_after_stop). */
    bool add_packet(const std::uint8_t* data, std::size_t size);

    /*! Places an already decoded packet. */
    bool add_decoded(const packet_header& packet);

    /*! Notes that the transport handed over a batch of \p n packets. */
    void note_batch(std::size_t n);

    /*!
     * The traffic has paused (its owner has the clock). If the next packet starts a
     * heap whose cnt was already retired, the sender has restarted without a stop
     * heap (killed, crashed, or run again with no stop) and numbers its heaps from
     * the start again: the retired cnts are forgotten, as a stop heap makes them, so
     * that its heaps are not taken for duplicates. Traffic that resumes with new cnts
     * keeps them.
     */
    void note_pause();

    /*! Retires every live heap as flushed (complete ones are still delivered). */
    void flush();

    /*! Flushes and stops: later packets are counted in packets_after_stop. */
    void stop();

    bool is_stopped() const { return d_stopped; }
    const recv_stats& stats() const { return d_stats; }
    recv_stats& stats() { return d_stats; }
    std::size_t live_heaps() const;

private:
    struct slot {
        detail::heap_storage_ptr storage; //!< null when free
        std::uint64_t cnt = 0;
        std::uint64_t age = 0;        //!< creation order, for flushing oldest first
        std::uint64_t window_age = 0; //!< creation order in its window, for evicting
        bool too_large = false;       //!< rejected heap kept only to swallow its packets
    };
    /*! How a heap left the window: decides what a later packet of it counts as. */
    enum class retired_as : std::uint8_t { complete, incomplete, too_large };

    /*! What both in-order paths do once [begin, end) is recorded: copy, count, and
     * retire the heap if that completed it. \return true while the heap stays live. */
    bool append_in_order(slot& s,
                         std::uint64_t begin,
                         std::uint64_t end,
                         const std::uint8_t* payload);
    /*! The repeat fast path (repeat_header); false: the packet needs decoding. */
    bool place_repeat(const std::uint8_t* data, std::size_t size);
    /*! The in-order fast path; false when the packet needs the general path. */
    bool place_in_order(const packet_header& packet);
    /*! Takes the shape of \p packet, just placed in order into \p s, if it has one. */
    void take_repeat_shape(slot& s, const packet_header& packet);
    void set_last_hit(std::size_t index);
    slot* find_slot(std::uint64_t cnt);
    slot& claim_slot(std::uint64_t cnt); //!< a free slot of cnt's window
    void start_heap(slot& s, const packet_header& packet);
    void place(slot& s, const packet_header& packet);
    /*! Takes the heap out of the window: delivers it if complete (or incomplete under
     * the deliver policy), otherwise counts it in \p reason_if_incomplete. */
    void retire(slot& s, recv_stat reason_if_incomplete);
    /*! A packet of a heap that left recently: counted by how it left. */
    void count_retired(retired_as how);
    void flush_except(const slot* keep);

    assembler_config d_config;
    fragment_limit d_fragments;
    std::shared_ptr<detail::heap_pool> d_pool;
    heap_ready d_ready;
    std::vector<slot> d_slots;
    cnt_index d_live; //!< live slots (too_large ones included) by cnt
    std::size_t d_last_hit = 0;
    bool d_after_pause = false;      //!< note_pause(): the next packet may be a restart
    slot* d_repeat_target = nullptr; //!< the last-hit live heap d_repeat is of; or null
    repeat_header d_repeat;
    std::uint64_t d_next_age = 0;
    std::vector<std::uint64_t> d_window_next; //!< per window: its next window_age
    recent_heaps<retired_as> d_retired;
    bool d_stopped = false;
    recv_stats d_stats;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif
