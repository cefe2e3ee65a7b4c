/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_CHUNK_ASSEMBLER_H
#define INCLUDED_SPEAD_PROTOCOL_CHUNK_ASSEMBLER_H

#include "interval_set.h"
#include "packet_decoder.h"
#include "timeline.h"
#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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
    /*! Separate received ranges per heap before a packet is refused. */
    std::size_t max_fragments = 64;

    /*! \throws std::invalid_argument naming the field, the value and the fix */
    void validate() const;
};

/*! Packets a chunk_assembler took or refused; each packet it is given ends in exactly
 * one (or, when it has no timestamp item, goes back to the caller as other). */
struct chunk_stats {
    std::uint64_t packets_placed = 0;       //!< payload copied to its position
    std::uint64_t packets_rejected = 0;     //!< of a late, misaligned, duplicate heap...
    std::uint64_t packets_late = 0;         //!< of a heap whose position was output
    std::uint64_t packets_duplicate = 0;    //!< bytes already received
    std::uint64_t packets_wrong_size = 0;   //!< HEAP_SIZE missing or not heap_bytes
    std::uint64_t packets_no_substream = 0; //!< substream_item set but absent
    std::uint64_t bytes_zero_filled = 0;    //!< written as zeros at release
};

/*!
 * \brief SPEAD packets of a time-continuous stream copied once, straight to their
 * place in a window of heap positions (the timeline), with no heap buffer between.
 *
 * The window is one block of window_heaps × substreams × heap_bytes, allocated at
 * construction: position k of substream s is at (k mod window × substreams + s) ×
 * heap_bytes. A heap is placed by the timestamp (and substream) item of the first of
 * its packets to arrive; its later packets are found by heap cnt, so they need not
 * carry the items. A packet without them that comes before its heap's first one is
 * not recognised (result other): senders that reorder should repeat the items in every
 * packet, as spead2's chunk receiver also needs. When a position is released, what never
 * arrived is zeroed first, so the callback sees each substream's heap as received with
 * zeros in the gaps; the data stays valid until the callback returns. Nothing is
 * allocated per packet or heap. Not thread-safe: the owner serialises calls.
 */
class SPEAD_API chunk_assembler
{
public:
    /*! A released position: \p data[s] is substream s's heap_bytes. */
    using release_fn =
        std::function<void(const timeline::released&, const std::uint8_t* const* data)>;

    enum class result {
        placed,  //!< copied to its position
        refused, //!< counted in chunk_stats and dropped
        other    //!< no timestamp item: not a data heap, the caller's to handle
    };

    /*! \throws std::invalid_argument as chunk_config::validate() */
    chunk_assembler(const chunk_config& config, release_fn release);

    result add_packet(const packet_header& packet);
    /*! Releases every position up to the newest placed one (end of stream). */
    void flush();

    const timeline_stats& heap_stats() const { return d_timeline.stats(); }
    const chunk_stats& stats() const { return d_stats; }

private:
    /*! One substream's heap at one position of the window. */
    struct record {
        bool live = false;
        std::size_t substream = 0;
        std::uint64_t cnt = 0;
        std::uint64_t bytes = 0;
        timeline::placement where{ timeline::placement::verdict::placed };
        interval_set received;
    };

    record& at(std::size_t slot, std::size_t substream)
    {
        return d_records[slot * d_config.timeline.substreams + substream];
    }
    std::uint8_t* slot_data(std::size_t slot, std::size_t substream)
    {
        return d_data.get() +
               (slot * d_config.timeline.substreams + substream) * d_config.heap_bytes;
    }
    /*! Finds the timestamp and substream immediates. \return false without a
     * timestamp */
    bool read_items(const packet_header& packet,
                    std::uint64_t& timestamp,
                    bool& has_substream,
                    std::uint64_t& substream) const;
    result copy(record& r, const packet_header& packet);
    void on_release(const timeline::released& r);
    /*! The live heap with \p cnt, by an open-addressing index of the records. */
    record* find_live(std::uint64_t cnt);
    std::size_t home(std::uint64_t cnt) const
    {
        return std::size_t((cnt * 0x9e3779b97f4a7c15ULL) >> d_index_shift);
    }
    void index_insert(std::uint32_t record_index);
    void index_erase(std::uint32_t record_index);
    /*! A heap that left: refused, or released with its position. */
    struct recent {
        std::uint64_t cnt = 0;
        std::uint64_t timestamp = 0;
        enum class how : std::uint8_t { none, refused, released } what = how::none;
    };
    void remember(std::uint64_t cnt, std::uint64_t timestamp, recent::how what);
    /*! nullptr unless the heap (cnt and timestamp: a restarted sender may reuse cnts)
     * left recently */
    const recent* find_recent(std::uint64_t cnt, std::uint64_t timestamp) const;

    chunk_config d_config;
    release_fn d_release;
    chunk_stats d_stats;
    std::unique_ptr<std::uint8_t[]> d_data;
    std::vector<record> d_records;
    std::vector<const std::uint8_t*> d_views; //!< per substream, for the callback
    /*! Live records by cnt: record index + 1, 0 when empty; linear probing. */
    std::vector<std::uint32_t> d_index;
    unsigned d_index_shift = 0;
    /*! Heaps that left recently: their later packets are counted, not placed again. */
    std::vector<recent> d_recent;
    std::size_t d_recent_next = 0;
    record* d_last = nullptr; //!< the heap the last packet went to
    timeline d_timeline;      //!< last: its callback reaches the members above
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_CHUNK_ASSEMBLER_H */
