/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_SOURCE_MAPPING_H
#define INCLUDED_SPEAD_MAPPING_SOURCE_MAPPING_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/tags.h>
#include <gnuradio/types.h>
#include <pmt/pmt.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! A tag and the output it goes on. */
struct output_tag {
    unsigned port;
    gr::tag_t tag;
};

/*! Where a fill() may write: spead.source's output buffers, and how long it may wait. */
struct output_room {
    const gr_vector_void_star* outputs = nullptr; //!< one buffer per output
    std::size_t max_items = 0;                    //!< room on each output, items
    std::uint64_t first_item = 0; //!< stream offset of the first item written
    /*! How long to wait for the first heap or chunk (then only what is there). */
    std::chrono::microseconds wait{ 0 };
};

/*! What a fill() made besides items, for spead.source to publish. */
struct source_output {
    std::vector<output_tag> tags;
    std::vector<pmt::pmt_t> descriptors; //!< messages for the `descriptors` port
    std::vector<pmt::pmt_t> heaps;       //!< PDUs for the `heaps` port
    bool want_heaps = false; //!< the `heaps` port is connected: build its PDUs
    void clear()
    {
        tags.clear();
        descriptors.clear();
        heaps.clear();
    }
};

/*!
 * \brief What spead.source's work() runs, one per output mode: heap_to_stream
 * (`heaps`) and chunk_to_stream (`continuous`). Not thread-safe (the block's work
 * thread); the counters may be read from any thread.
 */
class SPEAD_API source_mapping
{
public:
    virtual ~source_mapping() = default;

    enum class status {
        filled,  //!< items written (more would need waiting, or there is no room)
        timeout, //!< nothing came within the wait
        stopped  //!< the stream ended and everything it held is out
    };
    struct result {
        status what;
        std::size_t items; //!< written to each output
    };
    /*!
     * Writes what \p stream delivers into \p room; appends tags and messages to
     * \p out. Waits up to room.wait for the first heap or chunk when none is pending,
     * then takes only what is already there: returning empty-handed would park the
     * block.
     */
    virtual result
    fill(recv::stream& stream, const output_room& room, source_output& out) = 0;
    /*! Gives back what is pending (the stream is closing); the counters stay. */
    virtual void release() = 0;
    /*! A new run: nothing pending, counters zeroed. */
    virtual void reset() = 0;
    /*! Adds the mode's counters to \p stats (which holds the stream's). */
    virtual void add_counters(std::map<std::string, std::uint64_t>& stats) const = 0;
    /*! Items the output buffer must hold. */
    virtual std::size_t min_output_items() const = 0;
    /*! Items work() must be offered at least (0: any number). */
    virtual std::size_t min_noutput_items() const = 0;

protected:
    /*!
     * The next heap or chunk into \p item: waits up to \p wait when \p may_wait,
     * else takes only one that is there (`timeout` when none is).
     */
    template <typename Item>
    static recv::stream::pop_result
    next(recv::stream& stream,
         Item& item,
         bool may_wait,
         std::chrono::microseconds wait,
         recv::stream::pop_result (recv::stream::*pop)(Item&, std::chrono::microseconds),
         bool (recv::stream::*try_pop)(Item&))
    {
        if (may_wait)
            return (stream.*pop)(item, wait);
        return (stream.*try_pop)(item) ? recv::stream::pop_result::heap
                                       : recv::stream::pop_result::timeout;
    }
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_SOURCE_MAPPING_H */
