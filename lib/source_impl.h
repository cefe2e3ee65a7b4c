/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SOURCE_IMPL_H
#define INCLUDED_SPEAD_SOURCE_IMPL_H

#include "mapping/block_metrics.h"
#include "mapping/source_mapping.h"
#include "mapping/source_plan.h"
#include "mapping/stats_timer.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/source.h>
#include <memory>
#include <mutex>
#include <vector>

namespace gr {
namespace spead {

/*! GNU Radio glue: the stream (lib/streams) delivers heaps or chunks, the output
 * mode's source_mapping (lib/mapping: heap_to_stream, chunk_to_stream) turns them into
 * items, tags and messages; this puts the tags and messages on the scheduler's
 * outputs and ports, and opens and closes the stream with the flowgraph. */
class source_impl : public source
{
public:
    explicit source_impl(const source_config& config);
    ~source_impl() override;

    bool start() override;
    bool stop() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

    std::map<std::string, std::uint64_t> stats() const override;
    std::vector<std::string> bound_endpoints() const override;
    std::string active_transport() const override;
    /*! ControlPort (when on): the counters as knobs "<alias>::<counter>". */
    void setup_rpc() override;

private:
    /*! Opens the stream on the planned transport (auto: falls back to udp). */
    void open_stream();
    void close_stream();
    /*! Puts what the mapping's fill() made on the outputs and ports. */
    void publish(const source_output& out);
    void publish_stats_if_due(bool force);

    source_plan d_plan; //!< fixed after construction (but for auto's fallback)
    const std::unique_ptr<source_mapping> d_mapping; //!< the output mode's

    // ---- the current run ----
    mutable std::mutex d_stream_mutex; //!< guards d_stream, d_last_stats, d_bound
    std::unique_ptr<recv::stream> d_stream;
    recv_stats d_last_stats;
    std::vector<std::string> d_bound;
    source_output d_output; //!< of one fill()
    stats_timer d_stats_timer;

    const pmt::pmt_t d_descriptors_port;
    const pmt::pmt_t d_heaps_port;
    const pmt::pmt_t d_stats_port;
    block_watch d_watch; //!< last: stops reading the rest before it goes
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SOURCE_IMPL_H */
