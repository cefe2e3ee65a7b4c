/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_CHUNK_H
#define INCLUDED_SPEAD_RECV_CHUNK_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*! What a time-continuous stream holds for one substream at one position. */
enum class position_fill : std::uint8_t {
    missing,    //!< no heap (or an incomplete one under the drop policy): zeros
    incomplete, //!< a heap arrived in part: the missing bytes are zeros
    complete    //!< every byte arrived
};

/*!
 * \brief A run of consecutive positions of a time-continuous stream, one heap per
 * substream at each: packets are copied straight into it, and the consumer copies it
 * out once (spead.source output_mode continuous).
 *
 * Position p of substream s lies at data(s) + p × heap_bytes(): each substream's heaps
 * are one contiguous span. Positions are numbered from the start of the stream
 * (first_index() + p), across resynchronisations: the output index.
 */
class SPEAD_API chunk
{
public:
    /*! What the stream knows of one position. */
    struct position {
        std::uint64_t timestamp = 0; //!< the heap timestamp of this position
        bool discontinuity = false;  //!< first of the stream or after a resync
    };

    chunk(std::size_t positions, std::size_t substreams, std::size_t heap_bytes);

    /*! Output index of position 0. */
    std::uint64_t first_index() const { return d_first_index; }
    /*! Positions released into it: capacity() unless the stream ended part way. */
    std::size_t size() const { return d_size; }
    std::size_t capacity() const { return d_capacity; }
    std::size_t substreams() const { return d_substreams; }
    std::size_t heap_bytes() const { return d_heap_bytes; }

    std::uint8_t* data(std::size_t substream)
    {
        return d_data.get() + substream * d_capacity * d_heap_bytes;
    }
    const std::uint8_t* data(std::size_t substream) const
    {
        return d_data.get() + substream * d_capacity * d_heap_bytes;
    }
    const position& at(std::size_t p) const { return d_positions[p]; }
    position_fill fill(std::size_t p, std::size_t substream) const
    {
        return d_fills[p * d_substreams + substream];
    }
    /*! Bytes that arrived for the heap of substream \p s at position \p p. */
    std::uint64_t received(std::size_t p, std::size_t substream) const
    {
        return d_received[p * d_substreams + substream];
    }

    // ---- for the assembler that fills it ----
    /*! Starts over at output index \p first_index, empty. */
    void reset(std::uint64_t first_index)
    {
        d_first_index = first_index;
        d_size = 0;
    }
    /*! Records position \p p (released in order: p == size()). */
    void set_position(std::size_t p, const position& info)
    {
        d_positions[p] = info;
        d_size = p + 1;
    }
    void set_fill(std::size_t p,
                  std::size_t substream,
                  position_fill fill,
                  std::uint64_t received)
    {
        d_fills[p * d_substreams + substream] = fill;
        d_received[p * d_substreams + substream] = received;
    }

private:
    std::size_t d_capacity;
    std::size_t d_substreams;
    std::size_t d_heap_bytes;
    std::uint64_t d_first_index = 0;
    std::size_t d_size = 0;
    std::unique_ptr<std::uint8_t[]> d_data;
    std::vector<position> d_positions;
    std::vector<position_fill> d_fills;
    std::vector<std::uint64_t> d_received;
};

/*!
 * \brief What a time-continuous stream hands its consumer: a chunk, or a run of
 * positions whose data was lost because the consumer fell behind (no chunk was free;
 * counted in heaps_dropped_queue_full and heaps_missing): the consumer outputs zeros
 * there, so the sample index still means time.
 */
struct chunk_entry {
    std::unique_ptr<chunk> data; //!< null: the positions below were lost
    std::uint64_t first_index = 0;
    std::size_t positions = 0;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_CHUNK_H */
