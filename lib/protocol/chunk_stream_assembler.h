/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_CHUNK_STREAM_ASSEMBLER_H
#define INCLUDED_SPEAD_PROTOCOL_CHUNK_STREAM_ASSEMBLER_H

#include "assembler_config.h"
#include "interval_set.h"
#include "packet_decoder.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_chunk_stream.h>
#include <gnuradio/spead/stats.h>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief spead2's chunk stream semantics: each heap's first packet goes to the
 * placement policy (one indirect call per heap), which names its chunk, index and
 * offset; every packet's payload is copied straight to chunk data + heap_offset +
 * payload offset. A window of max_chunks consecutive chunk ids is live; a heap beyond
 * it moves the window on, handing the oldest chunks to \p ready; a heap behind it is
 * counted in too_old_heaps, one the policy rejects in rejected_heaps (custom stats, as
 * spead2's). A chunk's present byte is set when its heap completes (or per packet,
 * with packet presence).
 *
 * Not thread-safe: the owner serialises calls. Nothing is allocated per packet.
 */
class SPEAD_API chunk_stream_assembler
{
public:
    /*! A chunk for \p chunk_id, its chunk_id and stream_id set by the giver (null: its
     * heaps are dropped). */
    using acquire_fn =
        std::function<recv::stream_chunk*(std::int64_t chunk_id, std::uint64_t* stats)>;
    using ready_fn = std::function<void(recv::stream_chunk*, std::uint64_t* stats)>;
    /*! The oldest chunk id of the window moved on to this. */
    using head_fn = std::function<void(std::uint64_t)>;

    /*! \p limits: max_heaps (live heaps), allow_out_of_order and nontemporal_copies
     * are used. \throws std::invalid_argument when the config has no placement */
    chunk_stream_assembler(const recv::chunk_stream_config& config,
                           const recv::assembler_config& limits,
                           acquire_fn acquire,
                           ready_fn ready,
                           head_fn head_updated = head_fn());

    /*! One packet; returns false after a stop heap (the rest is not looked at). */
    bool add_packet(const std::uint8_t* data, std::size_t size);
    /*! Hands every live chunk on (end of stream); live heaps count as flushed. */
    void flush();
    /*! Hands on the chunks below \p chunk_id (a group moves its members on); their
     * live heaps' later packets are dropped. */
    void flush_until(std::uint64_t chunk_id);
    bool stop_seen() const { return d_stop_seen; }

    recv_stats stats() const { return d_stats; }
    /*! Staging area the placement adds to (batch_stats), indexed as the stream's
     * stats: first_custom_stat + custom index. */
    std::uint64_t* batch_stats() { return d_batch_stats.data(); }
    /*! Custom stats in order: the config's, then too_old_heaps, rejected_heaps. */
    const std::vector<std::pair<std::string, recv::stat_mode>>& custom_stats() const
    {
        return d_custom;
    }
    /*! Adds the staged custom stats into \p totals (counter: sum; maximum: max) and
     * clears them: once per batch. */
    void merge_batch_stats(std::vector<std::uint64_t>& totals);

private:
    struct live_heap {
        bool live = false;
        std::uint64_t cnt = 0;
        std::uint64_t heap_size = 0;
        std::uint64_t received = 0;
        recv::stream_chunk* chunk = nullptr; //!< null: its packets are dropped
        std::int64_t chunk_id = -1;
        std::size_t heap_index = 0;
        std::size_t heap_offset = 0;
        interval_set ranges;
        std::size_t max_ranges = 1;
    };

    live_heap* find(std::uint64_t cnt);
    /*! Asks the placement where the heap of \p h goes (d_place_data); false when it
     * rejects it (counted in rejected_heaps). */
    bool ask_placement(const std::uint8_t* data, const packet_header& h);
    live_heap& start_heap(const std::uint8_t* data, const packet_header& h);
    /*! The chunk for \p chunk_id, moving the window on; null behind it. */
    recv::stream_chunk* chunk_for(std::int64_t chunk_id);
    void flush_head();
    void retire(live_heap& h, recv_stat incomplete_stat);
    std::size_t stat_index(std::size_t custom) const
    {
        return recv::chunk_stream_config::first_custom_stat + custom;
    }

    recv::chunk_stream_config d_config;
    std::shared_ptr<recv::chunk_placement_policy> d_place;
    acquire_fn d_acquire;
    ready_fn d_ready;
    head_fn d_head_updated;
    std::vector<std::pair<std::string, recv::stat_mode>> d_custom;
    std::size_t d_too_old;  //!< custom index of too_old_heaps
    std::size_t d_rejected; //!< custom index of rejected_heaps
    std::vector<std::uint64_t> d_batch_stats;
    std::vector<std::uint64_t> d_items_of_place; //!< item ids, place order
    std::vector<std::int64_t> d_item_values;
    std::vector<std::uint8_t> d_extra;
    recv::chunk_place_data d_place_data{};
    std::vector<live_heap> d_heaps;
    std::size_t d_next_evict = 0;
    /*! The window: chunk ids [d_head, d_tail), d_window[id % max_chunks]. */
    std::vector<recv::stream_chunk*> d_window;
    std::uint64_t d_head = 0;
    std::uint64_t d_tail = 0;
    recv_stats d_stats;
    bool d_stop_seen = false;
    const bool d_in_order;    //!< !allow_out_of_order
    const bool d_nontemporal; //!< nontemporal_copies
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_CHUNK_STREAM_ASSEMBLER_H */
