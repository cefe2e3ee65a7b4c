/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_CHUNK_TO_STREAM_H
#define INCLUDED_SPEAD_MAPPING_CHUNK_TO_STREAM_H

#include "mapping/heap_to_stream.h"
#include "mapping/item_type.h"
#include "mapping/source_mapping.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_chunk.h>
#include <gnuradio/tags.h>
#include <gnuradio/types.h>
#include <pmt/pmt.h>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! How a time-continuous stream's chunks become items on spead.source's outputs. */
struct chunk_to_stream_config {
    std::size_t item_size = 8; //!< bytes of one output item (item type × vlen)
    std::size_t outputs = 1;   //!< substreams
    /*! 0 or 1: copied as received; 2, 4, 8: each component's bytes reversed. */
    std::size_t swap_unit = 0;
    /*! rx_time of a timestamp; empty: no rx_time tags (no sample rate). */
    std::function<pmt::pmt_t(std::uint64_t)> rx_time;
};

/*!
 * \brief A continuous stream's chunks → items on every output, with their tags
 * (docs/continuous.md): `rx_time` on the first item and after every discontinuity (a
 * resync, or positions lost to a full queue), `heap_missing` (uint64: items) on the
 * first item of each zero-filled run (a run that goes on into the next chunk is tagged
 * again there), `heap_incomplete` (uint64: bytes received) on an incomplete heap
 * output as received.
 *
 * spead.source's `continuous` output mode. fill() runs it all: it pops each chunk,
 * take()s it, write()s it out, over several calls if need be (a heap may be split
 * between them), and gives it back; the heaps the stream delivers beside the chunks
 * (descriptors, stop) go to \p control for their messages. No scheduler here:
 * spead.source's work() calls fill(). Not thread-safe (the block's work thread); the
 * counters may be read from any thread.
 */
class SPEAD_API chunk_to_stream : public source_mapping
{
public:
    /*! \p control: maps the heaps beside the chunks (their descriptors and PDUs);
     * none: they are dropped. */
    explicit chunk_to_stream(const chunk_to_stream_config& config,
                             std::unique_ptr<heap_to_stream> control = nullptr);

    result
    fill(recv::stream& stream, const output_room& room, source_output& out) override;
    void release() override { reset_chunk(); }
    /*! A new run: the first item is tagged rx_time again, counters zeroed. */
    void reset() override;
    /*! The control heaps' counters (heap_to_stream's), bytes_output and
     * items_zero_filled. */
    void add_counters(std::map<std::string, std::uint64_t>& stats) const override;
    /*! A chunk or two: 2 MiB per output, less with many outputs, at least 256 KiB. */
    std::size_t min_output_items() const override;
    /*! Any number: a heap may be split. */
    std::size_t min_noutput_items() const override { return 0; }

    /*! A chunk (or lost positions) to write out; \p heap_bytes: each heap's size. */
    void take(recv::chunk_entry&& entry, std::size_t heap_bytes);
    bool has_chunk() const { return d_taken; }
    /*!
     * Writes up to \p max_items items of the chunk taken to each output, from item
     * \p at of \p outputs (buffers of item_size-byte items), whose stream offset is
     * \p first_item; appends their tags. \return items written to each output.
     */
    std::size_t write(const gr_vector_void_star& outputs,
                      std::size_t at,
                      std::size_t max_items,
                      std::uint64_t first_item,
                      std::vector<output_tag>& tags);
    /*! Every item of the chunk taken is written. */
    bool chunk_done() const { return d_taken && d_offset == d_total; }
    /*! The chunk written out (null for lost positions), to give back to the stream. */
    std::unique_ptr<recv::chunk> give_back();

private:
    /*! Nothing pending; the next position written gets rx_time. */
    void reset_chunk();
    /*! Takes the heaps waiting beside the chunks (descriptors, stop). */
    void take_control_heaps(recv::stream& stream, source_output& out);
    void
    tag_position(std::size_t p, std::uint64_t at_item, std::vector<output_tag>& tags);
    void add(std::vector<output_tag>& tags,
             unsigned port,
             std::uint64_t offset,
             const pmt::pmt_t& key,
             const pmt::pmt_t& value) const;

    const chunk_to_stream_config d_config;
    const pmt::pmt_t d_rx_time_key;
    const pmt::pmt_t d_missing_key;
    const pmt::pmt_t d_incomplete_key;
    const pmt::pmt_t d_source_id;
    const std::unique_ptr<heap_to_stream> d_control;
    recv::heap d_control_heap;
    std::atomic<std::uint64_t> d_bytes_output{ 0 };

    recv::chunk_entry d_entry;
    bool d_taken = false;
    std::size_t d_items_per_heap = 0;
    std::size_t d_total = 0;  //!< items of the chunk taken, per output
    std::size_t d_offset = 0; //!< items of it written
    bool d_retag = true;      //!< the next position written gets rx_time
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_CHUNK_TO_STREAM_H */
