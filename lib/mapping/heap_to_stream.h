/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_HEAP_TO_STREAM_H
#define INCLUDED_SPEAD_MAPPING_HEAP_TO_STREAM_H

#include "mapping/item_type.h"
#include "mapping/source_mapping.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_heap.h>
#include <gnuradio/tags.h>
#include <pmt/pmt.h>
#include <unordered_map>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! How received heaps become stream items and tags (spead.source's parameters). */
struct heap_to_stream_config {
    item_type type = item_type::parse("complex_float");
    std::size_t vlen = 1;
    /*! Id of the payload item; 0: every addressed item but descriptors and NULL. */
    std::uint64_t payload_item = 0;
    /*! Key of the length tag; empty: none. */
    std::string len_tag_key = "packet_len";
    byte_order_mode byte_order = byte_order_mode::automatic;
    /*! Id of the sample counter for rx_time; 0: no rx_time. */
    std::uint64_t timestamp_item = 0;
    double sample_rate = 0.0; //!< samples per second of the counter
    double sync_time = 0.0;   //!< UNIX time of timestamp 0
    /*! Items of the largest heap (max_heap_size): the output buffer holds two. */
    std::size_t max_items = 1;
};

/*! rx_time of a timestamp: (uint64 seconds, double fraction), as UHD's, counting
 * \p sample_rate timestamps per second from \p sync_time (UNIX seconds). */
SPEAD_API pmt::pmt_t
rx_time_of(std::uint64_t timestamp, double sample_rate, double sync_time);

/*!
 * \brief spead.source's `heaps` output mode: a received heap → stream items and the
 * tags on its first item, its descriptors → `descriptors` messages, the heap → a
 * `heaps` PDU (docs/usage.md).
 *
 * fill() runs it all: it pops each heap, take()s it and, when there is room,
 * write()s it (a heap is never split). No scheduler here: spead.source's work()
 * calls fill(). Not thread-safe (the block's work thread); the counters may be read
 * from any thread.
 */
class SPEAD_API heap_to_stream : public source_mapping
{
public:
    heap_to_stream(const heap_to_stream_config& config, gr::logger_ptr logger);

    result
    fill(recv::stream& stream, const output_room& room, source_output& out) override;
    void release() override { d_pending = recv::heap(); }
    void reset() override;
    /*! heaps_without_payload, heaps_dropped_partial_item,
     * heaps_dropped_too_large_for_output, heaps_output, bytes_output,
     * descriptors_type_mismatch. */
    void add_counters(std::map<std::string, std::uint64_t>& stats) const override;
    /*! Two of the largest heap. */
    std::size_t min_output_items() const override { return 2 * d_config.max_items; }
    /*! The largest heap. */
    std::size_t min_noutput_items() const override { return d_config.max_items; }

    enum class verdict {
        output,      //!< items() items to write
        no_payload,  //!< descriptors or control only (heaps_without_payload)
        partial_item //!< payload not a whole number of items (heaps_dropped_partial_item)
    };
    /*!
     * Takes a new heap: learns its descriptors (names become tag keys; numpy and SPEAD
     * formats give the byte order) and appends a dict for each new or changed one to
     * \p new_descriptors, then locates the stream payload. Counts a heap it cannot
     * output.
     */
    verdict take(const recv::heap& h, std::vector<pmt::pmt_t>& new_descriptors);
    /*! take(), with the descriptors and (when wanted) the heap's PDU put in \p out. */
    verdict take(const recv::heap& h, source_output& out);
    /*! Items of the heap last taken. */
    std::size_t items() const { return d_items; }
    /*! Writes the heap last taken to \p out (items() × item size bytes), in the
     * configured byte order, and appends its tags, at stream offset \p first_item, to
     * \p tags: the length tag, heap_cnt, one per immediate item, heap_incomplete and
     * rx_time. */
    void write(const recv::heap& h,
               std::uint8_t* out,
               std::uint64_t first_item,
               std::vector<gr::tag_t>& tags);
    /*! The heap last taken as a `heaps` PDU: (metadata dict, payload bytes as
     * received). */
    pmt::pmt_t pdu(const recv::heap& h);
    /*! rx_time of a timestamp: (uint64 seconds, double fraction), as UHD's. */
    pmt::pmt_t rx_time(std::uint64_t timestamp) const
    {
        return rx_time_of(timestamp, d_config.sample_rate, d_config.sync_time);
    }

    /*! Bytes of one output item (item type × vlen). */
    std::size_t item_size() const { return d_item_size; }
    std::uint64_t heaps_without_payload() const { return d_without_payload.load(); }
    std::uint64_t heaps_dropped_partial_item() const { return d_partial_item.load(); }

private:
    /*! What is known of an item id: its tag key and how to order its bytes. */
    struct item_info {
        pmt::pmt_t tag_key;
        bool has_descriptor = false;
        descriptor desc;
        std::size_t auto_swap_unit = 0; //!< 0: as it is; 2, 4, 8: swap in auto mode
        bool little_endian = false;     //!< numpy '<': a timestamp is read that way
    };
    /*! One contiguous piece of a heap's stream payload. */
    struct payload_piece {
        const std::uint8_t* data;
        std::size_t length;
        std::size_t swap_unit; //!< 0 or 1: copied as it is
    };

    item_info& info_for(std::uint64_t id);
    std::size_t collect_payload(const recv::heap& h);
    bool timestamp_of(const recv::heap& h, std::uint64_t& value) const;
    /*! Counts (and the first time says) a payload descriptor whose type contradicts
     * item_type. */
    void check_type(const descriptor& d);

    const heap_to_stream_config d_config;
    const std::size_t d_item_size;
    gr::logger_ptr d_logger;
    const pmt::pmt_t d_len_tag_key; //!< PMT_NIL: no length tag
    const pmt::pmt_t d_heap_cnt_key;
    const pmt::pmt_t d_incomplete_key;
    const pmt::pmt_t d_rx_time_key;
    const pmt::pmt_t d_heap_size_key;

    std::unordered_map<std::uint64_t, item_info> d_known;
    item_info d_scratch_item; //!< for ids beyond the ones remembered
    bool d_known_full_warned = false;
    std::vector<payload_piece> d_pieces; //!< of the heap last taken
    std::size_t d_items = 0;
    recv::heap d_pending;          //!< taken from the queue, waiting for output space
    std::vector<gr::tag_t> d_tags; //!< of the heap being written
    std::atomic<std::uint64_t> d_without_payload{ 0 };
    std::atomic<std::uint64_t> d_partial_item{ 0 };
    std::atomic<std::uint64_t> d_too_large_for_output{ 0 };
    std::atomic<std::uint64_t> d_heaps_output{ 0 };
    std::atomic<std::uint64_t> d_bytes_output{ 0 };
    std::atomic<std::uint64_t> d_type_mismatches{ 0 };
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_HEAP_TO_STREAM_H */
