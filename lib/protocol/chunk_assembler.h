/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_CHUNK_ASSEMBLER_H
#define INCLUDED_SPEAD_PROTOCOL_CHUNK_ASSEMBLER_H

#include "chunk_config.h"
#include "cnt_index.h"
#include "fragment_limit.h"
#include "interval_set.h"
#include "packet_decoder.h"
#include "recent_heaps.h"
#include "repeat_header.h"
#include "timeline.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_chunk.h>
#include <gnuradio/spead/recv_heap.h>
#include <gnuradio/spead/stats.h>
#include <gnuradio/spead/substream_set.h>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief SPEAD packets of a time-continuous stream copied once, straight to their
 * place in a chunk (recv::chunk), with no heap buffer between.
 *
 * The timeline says where each heap goes: position k of the output lies in chunk
 * k / positions_per_chunk(), in each substream's span. A heap is placed by the
 * timestamp (and substream) item of the first of its packets to arrive; its later
 * packets are found by heap cnt, so they need not carry the items. A packet without
 * them that comes before its heap's first one is not recognised (result other): senders
 * that reorder should repeat the items in every packet, as spead2's chunk receiver also
 * needs. When a position is released, what never arrived is zeroed; when a chunk's last
 * position is released it goes to \p ready, and a chunk for new positions comes from
 * \p acquire. When \p acquire has none (the consumer fell behind), that chunk's
 * positions are lost: their packets are counted and dropped and \p ready gets an entry
 * without data, so the consumer still outputs every position.
 *
 * Every packet it is given ends in exactly one counter of stats() (or goes back as
 * other); every heap placed ends in heaps, incomplete_heaps_evicted/flushed or
 * heaps_dropped_queue_full, every heap refused in heaps_late, heaps_misaligned,
 * heaps_duplicate_position, heaps_bad_substream, heaps_other_substream or
 * heaps_wrong_size; every position ×
 * substream released is a complete heap, an incomplete one or in heaps_missing.
 * Nothing is allocated per packet or heap. Not thread-safe: the owner serialises calls,
 * but may run the payload copies of reserve() outside its lock, in parallel.
 */
class SPEAD_API chunk_assembler
{
public:
    /*! A chunk for new positions; null when none is free. */
    using acquire_fn = std::function<std::unique_ptr<recv::chunk>()>;
    /*! A filled chunk (or lost positions) for the consumer, in output order. */
    using ready_fn = std::function<void(recv::chunk_entry&&)>;

    enum class result {
        placed,  //!< copied to its position
        refused, //!< counted in stats() and dropped
        other,   //!< no timestamp item: not a data heap, the caller's to handle
        copy,    //!< reserve() only: do the ticket's copy, then commit() it
        drain    //!< reserve() only: see reserve(); nothing was counted
    };

    /*! A payload copy handed out by reserve(): its place is the packet's alone until
     * commit(), so the copy may run outside the owner's lock. */
    struct copy_ticket {
        std::uint8_t* to = nullptr;
        const std::uint8_t* from = nullptr;
        std::size_t bytes = 0;
        std::uint32_t record = 0;
        std::uint32_t packets = 1; //!< the packets it covers (extend())
    };

    /*! \throws std::invalid_argument as chunk_config::validate() */
    chunk_assembler(const chunk_config& config, acquire_fn acquire, ready_fn ready);

    /*! reserve(), the copy and commit() in one, under the owner's lock (result drain
     * as reserve() when other copies are in flight). */
    result add_packet(const packet_header& packet);
    /*!
     * add_packet() for a datagram that continues, in order, a heap whose last packet
     * went through add_packet(), in that packet's header layout (repeat_header: the
     * four specials alone): placed without decoding, with the same effect add_packet()
     * would have. \return false when it is not one; nothing was done, so decode it
     * and call add_packet().
     */
    bool add_repeat(const std::uint8_t* data, std::size_t size);
    /*!
     * The first half of add_packet(), for owners that copy outside their lock (several
     * receive threads): checks and counts the packet as add_packet() does, but leaves
     * the payload copy to the caller (result copy), who does it and then commit()s the
     * ticket. A position is released only once every copy into it has been
     * committed: a packet that would release positions early (it lies beyond the
     * window, or starts a new epoch) while copies are in flight is not taken (result
     * drain); the owner commits those copies and offers it again.
     */
    result reserve(const packet_header& packet, copy_ticket& ticket);
    /*! Whether \p next continues \p packet: the next piece of the same heap,
     * beginning where it ends, neither empty (as a sender's packets of one heap come
     * in a batch). Reads only the two headers: callers find runs before they lock. */
    static bool continues(const packet_header& packet, const packet_header& next)
    {
        return next.heap_cnt == packet.heap_cnt && packet.payload_length != 0 &&
               next.payload_length != 0 &&
               next.payload_offset == packet.payload_offset + packet.payload_length;
    }
    /*!
     * Takes into \p ticket (result copy of reserve()) the \p n packets \p more that
     * follow its packet, each continuing the one before (continues()): checked and
     * counted as reserve() of each would, in the ticket's one range and one
     * commit(). The caller copies packet k to ticket.to + (its offset - the ticket's
     * first offset). False: nothing was done (they pass the heap's end, or the
     * ticket's range is not the heap's last); reserve() them one by one. Costs the
     * same however long the run, so the work under the owner's lock shrinks with it
     * (docs/dev-recv-locking.md).
     */
    bool extend(copy_ticket& ticket, const packet_header* more, std::size_t n);
    /*! The copy of \p ticket is done: counts it, and releases what it completes. */
    void commit(const copy_ticket& ticket);
    /*! Copies reserved and not yet committed. */
    std::size_t copies_in_flight() const { return d_in_flight; }
    /*! End of stream: releases every position up to the newest placed one and hands
     * on the chunk that holds the last of them. No copies may be in flight. */
    void flush();

    /*! Counters (packets, heaps, positions), the timeline's included. */
    recv_stats stats() const;
    const chunk_config& config() const { return d_config; }

    /*! Whether \p packet carries immediate item \p id (and its value). */
    static bool
    find_immediate(const packet_header& packet, std::uint64_t id, std::uint64_t& value);

private:
    /*! One substream's heap at one position of the window. */
    struct record {
        bool live = false;
        std::size_t substream = 0;
        std::uint64_t cnt = 0;
        std::uint64_t bytes = 0;
        std::uint8_t* data = nullptr; //!< its place in a chunk; null: the chunk is lost
        timeline::placement where{ timeline::placement::verdict::placed };
        interval_set received;
    };
    /*! A chunk the window reaches. */
    struct live_chunk {
        static constexpr std::uint64_t none = ~std::uint64_t(0);
        std::uint64_t number = none;       //!< first output index / positions per chunk
        std::unique_ptr<recv::chunk> data; //!< null while lost
    };

    record& at(std::size_t slot, std::size_t substream)
    {
        return d_records[slot * d_config.timeline.substreams + substream];
    }
    /*! The chunk holding output index \p index, acquired on first use. */
    live_chunk& chunk_for(std::uint64_t index);
    /*! Refuses a heap's first packet: counts the heap in \p heap_stat (once; its later
     * packets are recognised by d_recent) and the packet. */
    result refuse_heap(const packet_header& packet,
                       std::uint64_t timestamp,
                       recv_stat heap_stat);
    /*! reserve() with \p ticket; add_packet() without (copies and commits at once). */
    result place(const packet_header& packet, copy_ticket* ticket);
    /*! Checks and counts a packet of the heap in \p r; result copy fills \p ticket,
     * or without one the payload is copied and committed at once (result placed). */
    result stage(record& r, const packet_header& packet, copy_ticket* ticket);
    /*! \p bytes of \p r's payload, from \p packets packets, are in place: counts
     * them, completes the heap. */
    void committed(record& r, std::uint64_t bytes, std::uint64_t packets = 1);
    void on_release(const timeline::released& r);
    /*! Gives \p c (its first \p positions) to the consumer; its place is free again. */
    void hand_on(live_chunk& c, std::size_t positions);
    /*! The live heap with \p cnt (by d_live); or null. */
    record* find_live(std::uint64_t cnt)
    {
        const std::size_t i = d_live.find(cnt);
        return i == cnt_index::none ? nullptr : &d_records[i];
    }
    /*! How a heap left: refused, or released with its position. */
    enum class left_as : std::uint8_t { refused, released };

    chunk_config d_config;
    substream_set d_taken; //!< substream value -> index
    std::size_t d_chunk_positions;
    acquire_fn d_acquire;
    ready_fn d_ready;
    recv_stats d_stats;
    bool d_flushing = false;          //!< incomplete heaps released now count as flushed
    std::vector<live_chunk> d_chunks; //!< by chunk number modulo live_chunks()
    std::vector<record> d_records;
    cnt_index d_live; //!< live records by cnt
    /*! Heaps that left recently, by cnt and timestamp (a restarted sender may reuse
     * cnts): their later packets are counted, not placed again. */
    recent_heaps<left_as> d_recent;
    fragment_limit d_fragments;
    record* d_last = nullptr; //!< the heap the last packet went to
    /*! The live heap whose packets add_repeat() recognises by d_repeat; or null. */
    record* d_repeat_record = nullptr;
    repeat_header d_repeat;
    std::size_t d_in_flight = 0; //!< tickets reserved, not committed
    timeline d_timeline;         //!< last: its callback reaches the members above
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_CHUNK_ASSEMBLER_H */
