/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_STREAM_TO_HEAP_H
#define INCLUDED_SPEAD_MAPPING_STREAM_TO_HEAP_H

#include "mapping/item_type.h"
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
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {

/*! How a tagged stream becomes heaps (spead.sink's parameters). */
struct stream_to_heap_config {
    item_type type = item_type::parse("complex_float");
    std::size_t vlen = 1;
    std::uint64_t payload_item = 0x1000;
    /*! Key of the length tag that frames packets; empty: heap_items per heap. */
    std::string len_tag_key = "packet_len";
    std::size_t heap_items = 0;
    gr::spead::flavour flavour;
    std::uint64_t cnt_start = 1; //!< cnt of the first heap without a heap_cnt tag
    std::uint64_t cnt_step = 1;
    /*! Heaps between repeated descriptors; 0: at the start and on change only. */
    std::size_t descriptor_interval = 0;
    std::string payload_name = "payload"; //!< empty: no descriptor for the payload
    std::string payload_description;
    byte_order_mode byte_order = byte_order_mode::as_is;
};

/*!
 * \brief A tagged stream → send heaps, as spead.sink sends them (docs/usage.md).
 *
 * frame() says what the next input items are (a packet to send, items to drop, or
 * wait for more); read_tags() turns the packet's tags into its cnt and immediate items;
 * descriptors_due() and build_control_heap() say when descriptors go out and build
 * them; build_data_heap() builds the heap. No scheduler here: spead.sink's
 * general_work() drives it. Not thread-safe (the block's work thread); the counters
 * may be read from any thread.
 */
class SPEAD_API stream_to_heap
{
public:
    stream_to_heap(const stream_to_heap_config& config, gr::logger_ptr logger);

    /*! A new run: cnts start again, descriptors are due, counters are zeroed. */
    void reset();

    /*! What to do with the input. */
    struct action {
        enum kind {
            send, //!< items form one packet (tags [first_tag, end_tag))
            drop, //!< items are dropped (counted)
            wait  //!< the packet is not all there: call again with items available
        } what;
        std::size_t items;
        std::size_t end_tag; //!< send: one past the packet's last tag
    };
    /*!
     * Frames the input at stream offset \p at, where \p available items are readable,
     * \p tags (sorted by offset) from index \p first_tag lie at or after \p at, and
     * the upstream buffer holds at most \p capacity items. Counts and says why items
     * are dropped (outside any packet: items_dropped_untagged; a packet longer than
     * the upstream buffer: packets_dropped_too_large).
     */
    action frame(const std::vector<gr::tag_t>& tags,
                 std::size_t first_tag,
                 std::uint64_t at,
                 std::size_t available,
                 std::size_t capacity);
    /*! Items the next frame() needs before it can say `send`. */
    std::size_t items_needed() const { return d_needed; }

    /*!
     * Reads the tags [\p first, \p end) of a packet: heap_cnt, and `0x…` or named keys
     * with integer values as immediate items (the length tag, rx_time and
     * heap_incomplete are not items; a value too wide for the flavour is counted in
     * tags_too_wide; anything else is warned about once per key). A name no descriptor
     * gives calls \p on_unknown_name once (the block then reads its descriptors port)
     * before it is given up.
     */
    void read_tags(const std::vector<gr::tag_t>& tags,
                   std::size_t first,
                   std::size_t end,
                   const std::function<void()>& on_unknown_name = {});

    /*! Learns a descriptor from the `descriptors` port: its name can then key tags, and
     * it goes out with the sink's descriptors. */
    void learn_descriptor(const descriptor& d);

    /*! Whether descriptors must go out before a data heap of \p items items: at the
     * start of a run, when they (or the payload's shape) changed, and every
     * descriptor_interval heaps. */
    bool descriptors_due(std::size_t items);
    /*! Builds a control heap: the descriptors (with stream start before the run's first
     * ones), stream stop. Empty when there is nothing to say. */
    void build_control_heap(send::heap& h, bool descriptors, bool stop);
    /*! The run's first descriptors went out (so a stop heap is worth sending). */
    bool run_started() const { return d_run_started; }
    /*! cnt of the next control heap: counting down from the flavour's largest, so
     * control heaps never take a cnt a heap_cnt tag might give. */
    std::uint64_t next_control_cnt() { return d_next_control_cnt--; }

    /*! Copies \p items items to a heap's payload buffer in the configured byte order. */
    void
    copy_payload(std::uint8_t* dst, const std::uint8_t* src, std::size_t items) const;
    /*!
     * Adds the immediates read_tags() found and the payload item (\p payload, \p items
     * items, which must outlive the heap) to \p h and gives the heap's cnt. False when
     * the heap cannot be sent (counted in heaps_rejected, said once).
     */
    bool build_data_heap(send::heap& h,
                         const std::uint8_t* payload,
                         std::size_t items,
                         std::uint64_t& cnt);
    /*! A data heap was handed to the stream. */
    void data_heap_sent() { d_data_heaps++, d_heaps_since_descriptors++; }
    /*! A heap the stream refused (counted in heaps_rejected, said once). */
    void heap_rejected(const std::string& why);
    /*! A control heap was handed to the stream. */
    void control_heap_sent() { d_control_heaps++; }

    /*! Logs \p message as a warning the first time \p what happens. */
    void warn_once(const std::string& what, const std::string& message);

    std::size_t item_size() const { return d_item_size; }
    /*! Counters by name: data_heaps, control_heaps, items_dropped_untagged,
     * packets_dropped_too_large, heaps_rejected, tags_too_wide. */
    std::map<std::string, std::uint64_t> counters() const;
    std::uint64_t data_heaps() const { return d_data_heaps.load(); }

private:
    /*! Resolves a tag key to an item id (0: not an item). */
    std::uint64_t item_id_for_key(const pmt::pmt_t& key,
                                  const std::function<void()>& on_unknown_name);

    const stream_to_heap_config d_config;
    const std::size_t d_item_size;
    gr::logger_ptr d_logger;
    const pmt::pmt_t d_len_tag_key; //!< PMT_NIL: fixed heap_items
    const pmt::pmt_t d_heap_cnt_key;

    // ---- descriptors the sink sends and names it understands ----
    std::map<std::uint64_t, descriptor> d_descriptors; //!< learnt on the port
    std::unordered_map<std::string, std::uint64_t> d_name_to_id;
    std::size_t d_described_items = 0; //!< payload shape in the last descriptor sent
    bool d_descriptors_dirty = true;
    bool d_run_started = false;
    std::size_t d_heaps_since_descriptors = 0;
    std::set<std::string> d_warned;

    // ---- the current run ----
    std::uint64_t d_next_cnt;
    std::uint64_t d_next_control_cnt;
    std::size_t d_needed;
    std::uint64_t d_skip = 0; //!< items still to drop (an oversized packet)
    bool d_has_cnt = false;   //!< of the packet last read
    std::uint64_t d_cnt = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> d_immediates;

    std::atomic<std::uint64_t> d_data_heaps{ 0 };
    std::atomic<std::uint64_t> d_control_heaps{ 0 };
    std::atomic<std::uint64_t> d_items_dropped_untagged{ 0 };
    std::atomic<std::uint64_t> d_packets_dropped_too_large{ 0 };
    std::atomic<std::uint64_t> d_heaps_rejected{ 0 };
    std::atomic<std::uint64_t> d_tags_too_wide{ 0 };
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_STREAM_TO_HEAP_H */
