/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_CHUNK_TO_STREAM_H
#define INCLUDED_SPEAD_MAPPING_CHUNK_TO_STREAM_H

#include "mapping/item_type.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_chunk.h>
#include <gnuradio/tags.h>
#include <gnuradio/types.h>
#include <pmt/pmt.h>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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

/*! A tag and the output it goes on. */
struct output_tag {
    unsigned port;
    gr::tag_t tag;
};

/*!
 * \brief A continuous stream's chunks → items on every output, with their tags
 * (docs/continuous.md): `rx_time` on the first item and after every discontinuity (a
 * resync, or positions lost to a full queue), `heap_missing` (uint64: items) on the
 * first item of each zero-filled run (a run that goes on into the next chunk is tagged
 * again there), `heap_incomplete` (uint64: bytes received) on an incomplete heap
 * output as received.
 *
 * A chunk may be written over several calls (a heap may be split between them). No
 * scheduler here: spead.source's work() pops chunks from the stream, hands each to
 * take(), writes it out with write() and gives it back. Not thread-safe (the block's
 * work thread).
 */
class SPEAD_API chunk_to_stream
{
public:
    explicit chunk_to_stream(const chunk_to_stream_config& config);

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
    /*! A new run: the first item is tagged rx_time again. */
    void reset();

private:
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
