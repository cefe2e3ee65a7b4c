/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_CHUNK_PLACE_H
#define INCLUDED_SPEAD_RECV_CHUNK_PLACE_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief What a chunk placement decides for a heap, in spead2's layout (spead2 4.4's
 * recv::chunk_place_data, field for field), so a callback compiled for spead2 (a
 * numba cfunc, C code) runs unchanged. Inputs: packet, packet_size, items (values of
 * the requested immediate items of the heap's first packet, -1 when absent),
 * batch_stats (add to the stream's custom stats by their index). Outputs: chunk_id (-1
 * or untouched: the heap is rejected), heap_index (its present byte), heap_offset (its
 * byte offset in the chunk's data), and optionally extra_size bytes written to extra,
 * copied to the chunk's extra at extra_offset. Fields are only ever appended; the
 * callback is given sizeof(chunk_place_data) to check against.
 */
extern "C" {
struct chunk_place_data {
    const std::uint8_t* packet;
    std::size_t packet_size;
    std::int64_t* items;
    std::int64_t chunk_id;
    std::size_t heap_index;
    std::size_t heap_offset;
    std::uint64_t* batch_stats;
    std::uint8_t* extra;
    std::size_t extra_offset;
    std::size_t extra_size;
};
}

/*! spead2's C callback with user data (scipy.LowLevelCallable "void (void *, size_t,
 * void *)"). */
using chunk_place_c_function = void (*)(chunk_place_data* data,
                                        std::size_t data_size,
                                        void* user_data);
/*! spead2's C callback without user data ("void (void *, size_t)"). */
using chunk_place_c_function_no_data = void (*)(chunk_place_data* data,
                                                std::size_t data_size);

/*!
 * \brief Where a chunk stream's heaps go: chosen once per stream, asked once per heap
 * (by its first packet to arrive). Two peers: a spead2-style C callback
 * (make_callback_placement) and gr-spead's declarative placement by timestamp and
 * substream (make_declarative_placement), which needs no compiler.
 */
class SPEAD_API chunk_placement_policy
{
public:
    virtual ~chunk_placement_policy() = default;
    /*! Items whose immediate values place() reads; the stream requests them. */
    virtual std::vector<std::uint64_t> items() const { return {}; }
    /*! The stream's whole item list (the config's, then those of items() it lacked):
     * where place() finds the values it reads. Called once, before place(). */
    virtual void bind(const std::vector<std::uint64_t>& stream_items)
    {
        (void)stream_items;
    }
    /*! Fills the outputs of \p data (see chunk_place_data). */
    virtual void place(chunk_place_data* data, std::size_t data_size) = 0;
};

/*! A C callback with spead2's ABI, with \p user_data. \throws std::invalid_argument
 * when \p fn is null. */
SPEAD_API std::shared_ptr<chunk_placement_policy>
make_callback_placement(chunk_place_c_function fn, void* user_data);
/*! A C callback with spead2's ABI, without user data. */
SPEAD_API std::shared_ptr<chunk_placement_policy>
make_callback_placement(chunk_place_c_function_no_data fn);

/*!
 * \brief gr-spead's declarative placement: position k = timestamp / timestamp_step
 * (timestamps not a multiple of it are rejected) lies in chunk k / heaps_per_chunk;
 * within it, heap_index = (k % heaps_per_chunk) × substreams + substream and
 * heap_offset = heap_index × heap_bytes. The substream is the value of substream_item
 * minus first_substream (0 when substream_item is 0), or its place in substream_ids
 * when those are given; heaps outside [0, substreams) are rejected. first_substream
 * and substream_ids are checked as spead.source's (substream_set::choose()). A chunk
 * holds chunk_bytes() of data and chunk_heaps() present bytes.
 */
struct SPEAD_API declarative_placement_config {
    std::uint64_t timestamp_item = 0;  //!< immediate item with the heap's timestamp
    std::uint64_t timestamp_step = 0;  //!< timestamp difference of consecutive heaps
    std::size_t heap_bytes = 0;        //!< HEAP_SIZE of every data heap
    std::size_t heaps_per_chunk = 0;   //!< positions per chunk (per substream)
    std::uint64_t substream_item = 0;  //!< 0: every heap is substream 0
    std::size_t substreams = 1;        //!< substreams this stream takes
    std::uint64_t first_substream = 0; //!< value of substream_item of substream 0
    /*! Or the value of substream_item of each substream, in order (first_substream
     * 0); empty: first_substream's range. */
    std::vector<std::uint64_t> substream_ids;

    std::size_t chunk_heaps() const { return heaps_per_chunk * substreams; }
    std::size_t chunk_bytes() const { return chunk_heaps() * heap_bytes; }
    /*! \throws std::invalid_argument naming the field, the value and the fix */
    void validate() const;
};

/*! \throws std::invalid_argument as declarative_placement_config::validate() */
SPEAD_API std::shared_ptr<chunk_placement_policy>
make_declarative_placement(const declarative_placement_config& config);

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_CHUNK_PLACE_H */
