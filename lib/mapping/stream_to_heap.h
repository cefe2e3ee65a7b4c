/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_STREAM_TO_HEAP_H
#define INCLUDED_SPEAD_MAPPING_STREAM_TO_HEAP_H

#include "mapping/sink_mapping.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/descriptor.h>
#include <gnuradio/spead/flavour.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/tags.h>
#include <unordered_map>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {

/*! How a stream of tagged packets becomes heaps (spead.sink's parameters). */
struct stream_to_heap_config : sink_heap_config {
    /*! Key of the length tag that frames packets; empty: heap_items per heap. */
    std::string len_tag_key = "packet_len";
    std::size_t heap_items = 0;
};

/*!
 * \brief spead.sink's `heaps` input mode: one tagged packet (or heap_items items)
 * → one heap (docs/usage.md).
 *
 * send() runs it all: frame() says what the next input items are (a packet to send,
 * items to drop, or wait for more); read_tags() turns the packet's tags into its cnt
 * and immediate items; build_data_heap() builds the heap; descriptors and control
 * heaps are sink_mapping's. No scheduler here: spead.sink's general_work() calls
 * send(). Not thread-safe (the block's work thread); the counters may be read from
 * any thread.
 */
class SPEAD_API stream_to_heap : public sink_mapping
{
public:
    stream_to_heap(const stream_to_heap_config& config, gr::logger_ptr logger);

    std::size_t send(const sink_input& in, send_slots& out) override;
    /*! Items the next frame() needs before it can say `send`. */
    std::size_t items_needed() const override { return d_needed; }
    std::size_t fixed_heap_items() const override;
    void reset() override;
    /*! sink_mapping's and items_dropped_untagged, packets_dropped_too_large,
     * tags_too_wide. */
    std::map<std::string, std::uint64_t> counters() const override;

    /*! What to do with the input. */
    struct action {
        enum kind {
            send,  //!< items form one packet (tags [first_tag, end_tag))
            begin, //!< items begin a packet longer than the upstream buffer holds
            more,  //!< items continue it (the last part when gathered() is false after)
            drop,  //!< items are dropped (counted)
            wait   //!< the packet is not all there: call again with items available
        } what;
        std::size_t items;
        std::size_t end_tag; //!< send, begin, more: one past the part's last tag
    };
    /*!
     * Frames the input at stream offset \p at, where \p available items are readable,
     * \p tags (sorted by offset) from index \p first_tag lie at or after \p at, and
     * the upstream buffer holds at most \p capacity items. A packet longer than
     * \p capacity is taken in parts (begin, then more until it is all there: the
     * upstream buffer needs no minimum size). Counts and says why items are dropped
     * (outside any packet: items_dropped_untagged; a packet whose payload the flavour
     * cannot address: packets_dropped_too_large).
     */
    action frame(const std::vector<gr::tag_t>& tags,
                 std::size_t first_tag,
                 std::uint64_t at,
                 std::size_t available,
                 std::size_t capacity);

    /*! A packet is being taken in parts: more of it is due before anything else. */
    bool gathering() const { return d_gather_left > 0; }

    /*!
     * Reads the tags [\p first, \p end) of a packet (or, with \p more, of a further
     * part of it, adding to what the first parts gave): heap_cnt, and `0x…` or named keys
     * with integer values as immediate items (the length tag, rx_time and
     * heap_incomplete are not items; a value too wide for the flavour is counted in
     * tags_too_wide; anything else is warned about once per key). A name no descriptor
     * gives calls \p on_unknown_name once (the block then reads its descriptors port)
     * before it is given up.
     */
    void read_tags(const std::vector<gr::tag_t>& tags,
                   std::size_t first,
                   std::size_t end,
                   const std::function<void()>& on_unknown_name = {},
                   bool more = false);

    /*!
     * Adds the immediates read_tags() found and the payload item (\p payload, \p items
     * items, which must outlive the heap) to \p h and gives the heap's cnt. False when
     * the heap cannot be sent (counted in heaps_rejected, said once).
     */
    bool build_data_heap(send::heap& h,
                         const std::uint8_t* payload,
                         std::size_t items,
                         std::uint64_t& cnt);

private:
    /*! A part of a packet longer than the upstream buffer (\p next: begin or more,
     * its tags from \p first_tag): copied into the packet's slot, which is sent once
     * the last part is in. */
    void gather(send_slots& out,
                const std::uint8_t* part,
                const action& next,
                std::size_t first_tag,
                const std::function<void()>& on_unknown_name);
    /*! One past the last of \p tags from \p first at an offset before \p end. */
    static std::size_t
    tags_before(const std::vector<gr::tag_t>& tags, std::size_t first, std::uint64_t end);
    /*! Resolves a tag key to an item id (0: not an item). */
    std::uint64_t item_id_for_key(const pmt::pmt_t& key,
                                  const std::function<void()>& on_unknown_name);

    const stream_to_heap_config d_config;
    const pmt::pmt_t d_len_tag_key; //!< PMT_NIL: fixed heap_items
    const pmt::pmt_t d_heap_cnt_key;

    // ---- the current run ----
    std::uint64_t d_next_cnt;
    std::size_t d_needed;
    std::uint64_t d_skip = 0; //!< items still to drop (an oversized packet)
    /*! A packet taken in parts: items still to come, items in all, and its slot. */
    std::uint64_t d_gather_left = 0;
    std::size_t d_gather_items = 0;
    std::size_t d_gather_done = 0;
    std::optional<send_slots::slot_ref> d_gather;
    bool d_has_cnt = false; //!< of the packet last read
    std::uint64_t d_cnt = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> d_immediates;
    std::vector<gr::tag_t> d_tags; //!< of one send() call

    std::atomic<std::uint64_t> d_items_dropped_untagged{ 0 };
    std::atomic<std::uint64_t> d_packets_dropped_too_large{ 0 };
    std::atomic<std::uint64_t> d_tags_too_wide{ 0 };
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_STREAM_TO_HEAP_H */
