/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_STREAM_TO_CHUNK_H
#define INCLUDED_SPEAD_MAPPING_STREAM_TO_CHUNK_H

#include "mapping/sink_mapping.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/continuous_layout.h>
#include <gnuradio/spead/descriptor.h>
#include <gnuradio/spead/flavour.h>
#include <gnuradio/spead/send_heap.h>
#include <pmt/pmt.h>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! spead.sink's continuous input mode (sink::make documents each parameter): the
 * heap format, the layout shared with the receiving side, and what only the sender
 * has. */
struct stream_to_chunk_config : sink_heap_config, continuous_layout {
    std::size_t heap_items = 0;        //!< items per heap per input, >= 1
    std::uint64_t start_timestamp = 0; //!< of round 0 without an rx_time tag
    double sample_rate = 0.0;          //!< timestamps per second (rx_time)
    double sync_time = 0.0;            //!< seconds: timestamp 0
};

/*!
 * \brief spead.sink's `continuous` input mode: each input a time series, cut into
 * heaps of heap_items items that carry their timestamp (docs/continuous.md).
 *
 * The inputs advance together in rounds: round k holds one heap of heap_items items
 * from each input, input 0 first, all with the timestamp start + k × step. Heap j
 * (over all heaps sent) has cnt cnt_start + j × cnt_step, modulo the flavour's
 * addresses. An `rx_time` tag re-bases the timestamps: at a heap boundary from that
 * heap, elsewhere from the next one. A timestamp too wide for the flavour's immediate
 * is sent modulo 2^bits and counted (timestamps_wrapped). The timestamp and substream
 * items are described with the payload (sink_mapping). No scheduler here:
 * spead.sink's general_work() calls send(). Not thread-safe (the block's work
 * thread); the counters may be read from any thread.
 */
class SPEAD_API stream_to_chunk : public sink_mapping
{
public:
    /*! \throws std::invalid_argument when the layout is not valid
     * (continuous_layout::validate_layout) or heap_items is 0 */
    stream_to_chunk(const stream_to_chunk_config& config, gr::logger_ptr logger);

    /*! Whole rounds of one heap per input. */
    std::size_t send(const sink_input& in, send_slots& out) override;
    std::size_t items_needed() const override { return d_config.heap_items; }
    std::size_t fixed_heap_items() const override { return d_config.heap_items; }
    /*! A new run: round 0 at start_timestamp, cnts start again, counters zeroed; warns
     * when the timestamps wrap within a day at sample_rate. */
    void reset() override;
    /*! sink_mapping's and timestamps_wrapped, rx_time_ignored. */
    std::map<std::string, std::uint64_t> counters() const override;

    /*! Seconds the timestamp immediate takes to wrap at sample_rate (none when
     * sample_rate is 0). */
    std::optional<double> wrap_period() const;

    /*! Descriptors of the timestamp item and (when there is one) the substream item,
     * immediates of the flavour's width (learnt at construction). */
    std::vector<descriptor> descriptors() const;

    /*!
     * An `rx_time` tag (uint64 seconds, double fraction) \p items_into_heap items after
     * the start of the current round's heaps. Timestamp = round((secs + frac −
     * sync_time) × sample_rate). Ignored (counted in rx_time_ignored, said once) when
     * sample_rate is 0, the value is not such a tuple, or the time is before sync_time.
     */
    void rx_time_tag(std::uint64_t items_into_heap, const pmt::pmt_t& value);

    /*! Timestamp of the current round's heaps (before any wrap). */
    std::uint64_t round_timestamp() const;

    /*!
     * Adds input \p input's heap of the current round to \p h: the timestamp and
     * substream immediates, repeated in every packet, and the payload (\p payload,
     * heap_items items, which must outlive the heap). \return its cnt.
     */
    std::uint64_t
    build_heap(send::heap& h, std::size_t input, const std::uint8_t* payload);

    /*! Every input's heap of the round went out: on to the next round. */
    void next_round();

private:
    void ignore_rx_time(const std::string& what, const std::string& why);

    const stream_to_chunk_config d_config;
    const pmt::pmt_t d_rx_time_key;
    std::vector<gr::tag_t> d_tags; //!< rx_time tags of one heap

    std::uint64_t d_round = 0;
    std::uint64_t d_base_round = 0; //!< round whose timestamp is d_base_timestamp
    std::uint64_t d_base_timestamp = 0;
    std::optional<std::uint64_t> d_next_base_timestamp; //!< from an rx_time mid-heap
    std::uint64_t d_heaps = 0; //!< heaps built this run (for their cnts)

    std::atomic<std::uint64_t> d_timestamps_wrapped{ 0 };
    std::atomic<std::uint64_t> d_rx_time_ignored{ 0 };
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_STREAM_TO_CHUNK_H */
