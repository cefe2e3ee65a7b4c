/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SOURCE_IMPL_H
#define INCLUDED_SPEAD_SOURCE_IMPL_H

#include "mapping/chunk_to_stream.h"
#include "mapping/heap_to_stream.h"
#include "mapping/source_params.h"
#include "mapping/stats_timer.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/source.h>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace gr {
namespace spead {

/*! GNU Radio glue: the stream (lib/streams) delivers heaps, heap_to_stream
 * (lib/mapping) turns them into items, tags and messages; this puts them in the
 * output buffer and on the ports, and opens and closes the stream with the flowgraph. */
class source_impl : public source
{
public:
    explicit source_impl(const source_params& params);
    ~source_impl() override;

    bool start() override;
    bool stop() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

    std::map<std::string, std::uint64_t> stats() const override;
    std::vector<std::string> bound_endpoints() const override;
    std::string active_transport() const override;

private:
    /*! Opens the stream on the planned transport (auto: falls back to udp). */
    void open_stream();
    void close_stream();
    /*! Takes a heap from the queue into d_pending: its messages go out; false when it
     * has nothing to output (counted). */
    bool take_heap();
    /*! Continuous mode: takes the control heaps waiting (descriptors, stop). */
    void take_control_heaps();
    int work_continuous(int noutput_items, gr_vector_void_star& output_items);
    void publish_stats_if_due(bool force);

    source_plan d_plan; //!< fixed after construction (but for auto's fallback)
    heap_to_stream d_mapping;
    chunk_to_stream d_series; //!< continuous mode

    // ---- the current run ----
    mutable std::mutex d_stream_mutex; //!< guards d_stream, d_last_stats, d_bound
    std::unique_ptr<recv::stream> d_stream;
    recv_stats d_last_stats;
    std::vector<std::string> d_bound;
    recv::heap d_pending; //!< taken from the queue, waiting for output space
    std::vector<pmt::pmt_t> d_new_descriptors;
    std::vector<gr::tag_t> d_tags;
    std::vector<output_tag> d_series_tags;
    bool d_heaps_port_connected = false;
    stats_timer d_stats_timer;
    std::atomic<std::uint64_t> d_heaps_output{ 0 };
    std::atomic<std::uint64_t> d_bytes_output{ 0 };
    std::atomic<std::uint64_t> d_heaps_dropped_too_large_for_output{ 0 };

    const pmt::pmt_t d_descriptors_port;
    const pmt::pmt_t d_heaps_port;
    const pmt::pmt_t d_stats_port;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SOURCE_IMPL_H */
