/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_TIMELINE_H
#define INCLUDED_SPEAD_PROTOCOL_TIMELINE_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_chunk.h>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace gr {
namespace spead {

/*! The shape of a time-continuous stream (spead.source, output_mode continuous). */
struct SPEAD_API timeline_config {
    /*! Timestamp increase from one heap to the next (> 0). */
    std::uint64_t timestamp_step = 1;
    /*! Heap positions, per substream, that may be filling at once (> 0). */
    std::size_t window_heaps = 64;
    /*! Outputs that advance together; a heap names its own (> 0). */
    std::size_t substreams = 1;

    /*! \throws std::invalid_argument naming the field, the value and the fix */
    void validate() const;
};

/*! What became of the heaps offered to a timeline; each heap ends in exactly one of
 * placed, late, misaligned, duplicate and bad_substream. */
struct timeline_stats {
    std::uint64_t heaps_placed = 0;        //!< given a position in the window
    std::uint64_t heaps_late = 0;          //!< behind the window: its position was output
    std::uint64_t heaps_misaligned = 0;    //!< timestamp not first + k × step
    std::uint64_t heaps_duplicate = 0;     //!< its position and substream already taken
    std::uint64_t heaps_bad_substream = 0; //!< substream index ≥ substreams
    std::uint64_t timestamp_resyncs = 0;   //!< jumps beyond the window, either way
    std::uint64_t positions_released = 0;  //!< positions handed to the output
    std::uint64_t heaps_missing = 0; //!< (position, substream) released with no heap
};

/*!
 * \brief Where each heap of a time-continuous stream goes, and when a position is
 * given to the output.
 *
 * The first heap's timestamp is position 0; a heap with timestamp first + k × step goes
 * to position k, into slot k mod window_heaps of its substream. Positions leave in order,
 * each once: as soon as every substream's heap there is complete, or, missing or
 * incomplete, when a heap window_heaps or more positions ahead arrives, or at flush().
 * A timestamp that jumps more than a window ahead or behind (a sender restart) flushes
 * what is live and starts again with that heap as position 0 of a new epoch; its first
 * released position is marked as a discontinuity (rx_time is tagged again there).
 *
 * The output index counts released positions across epochs: the output stays one
 * continuous series of heaps. Nothing is allocated after construction. Not
 * thread-safe: the owner serialises calls.
 */
class SPEAD_API timeline
{
public:
    /*! What is known of one substream's heap at a released position (missing: no
     * heap arrived). */
    using fill = recv::position_fill;
    /*! A position leaving the window. */
    struct released {
        std::uint64_t output_index; //!< positions released before this one, all epochs
        std::uint64_t timestamp;    //!< first + k × step of this epoch
        std::size_t slot;           //!< where its data lies: [0, window_heaps)
        bool discontinuity;         //!< first of the stream or of a new epoch
        const fill* fills;          //!< one per substream, valid during the callback
    };
    using release_fn = std::function<void(const released&)>;

    /*! Where an offered heap goes. */
    struct placement {
        enum class verdict { placed, late, misaligned, duplicate, bad_substream } what;
        std::uint64_t position = 0; //!< within the epoch
        /*! Where it will be released: released::output_index of its position. */
        std::uint64_t output_index = 0;
        std::size_t slot = 0;
        std::uint64_t epoch = 0; //!< resyncs before it
    };

    /*! \throws std::invalid_argument as timeline_config::validate() */
    timeline(const timeline_config& config, release_fn release);

    /*! Finds the heap's position, first releasing what it pushes out of the window
     * (or everything, when it starts a new epoch). */
    placement place(std::uint64_t timestamp, std::size_t substream);
    /*! Records that every byte of a placed heap arrived; releases the positions this
     * completes at the front of the window. */
    void complete(const placement& where, std::size_t substream);
    /*! Releases every position up to the newest placed one (the end of the stream). */
    void flush();
    /*! Whether place(\p timestamp, ...) would release positions that are not complete
     * (it lies more than a window ahead, or starts a new epoch). Lets an owner whose
     * copies run outside its lock finish them first (chunk_assembler::reserve()). */
    bool forces_release(std::uint64_t timestamp) const;

    const timeline_stats& stats() const { return d_stats; }

private:
    enum class state : std::uint8_t { empty, filling, complete };

    /*! Where a timestamp lies relative to the window (place()'s arithmetic). */
    struct location {
        bool misaligned = false;
        bool late = false;
        bool resync = false;
        std::uint64_t position = 0; //!< within the epoch, when placed without resync
    };
    location locate(std::uint64_t timestamp) const;

    void release_front();
    void release_until(std::uint64_t position);
    void release_complete_front();
    void start_epoch(std::uint64_t timestamp);
    state& at(std::size_t slot, std::size_t substream)
    {
        return d_states[slot * d_config.substreams + substream];
    }

    timeline_config d_config;
    release_fn d_release;
    timeline_stats d_stats;
    std::vector<state> d_states; //!< window_heaps × substreams
    std::vector<fill> d_fills;   //!< per substream, for the release callback
    bool d_started = false;
    bool d_discontinuity = true;
    std::uint64_t d_origin = 0; //!< timestamp of position 0 in this epoch
    std::uint64_t d_front = 0;  //!< oldest position not released
    std::uint64_t d_end = 0;    //!< one past the newest placed position
    std::uint64_t d_output = 0; //!< positions released, all epochs
    std::uint64_t d_epoch = 0;  //!< resyncs so far
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_TIMELINE_H */
