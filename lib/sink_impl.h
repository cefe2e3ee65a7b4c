/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SINK_IMPL_H
#define INCLUDED_SPEAD_SINK_IMPL_H

#include "mapping/block_metrics.h"
#include "mapping/send_slots.h"
#include "mapping/sink_mapping.h"
#include "mapping/sink_plan.h"
#include "mapping/stats_timer.h"
#include <gnuradio/spead/sink.h>
#include <memory>
#include <vector>

namespace gr {
namespace spead {

/*! GNU Radio glue: the input mode's sink_mapping (lib/mapping: stream_to_heap,
 * stream_to_chunk) cuts the input into heaps and sends them through send_slots (the
 * payload copies and the send stream, lib/streams); this hands it the scheduler's
 * input, tags and descriptor messages, and opens and closes the stream with the
 * flowgraph. */
class sink_impl : public sink
{
public:
    explicit sink_impl(const sink_config& config);
    ~sink_impl() override;

    bool start() override;
    bool stop() override;
    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

    std::map<std::string, std::uint64_t> stats() const override;
    std::string active_transport() const override;
    /*! ControlPort (when on): the counters as knobs "<alias>::<counter>". */
    void setup_rpc() override;

private:
    /*! Opens the stream on the planned transport (auto: falls back to udp). */
    void open_stream();
    /*! Sends the stop heap (if asked for) and closes the stream. */
    void close_stream();
    void drain_descriptor_messages();
    /*! d_input's capacity (the smallest input buffer's) and items_stay_put. */
    void read_input_buffers();
    /*! tcp, rdma: one stream per endpoint (substream), each watched in d_links. */
    std::vector<std::unique_ptr<send::stream>> open_links();
    /*! tcp, rdma: a connection is not up (lost, or being made again). */
    bool link_down() const;
    /*! tcp, rdma without reconnect: a connection is gone for good. */
    bool link_lost() const;
    /*! The one receiver the sink connects to, for a message (else "a receiver"). */
    std::string lost_peer_name() const;
    void publish_stats_if_due(bool force);

    sink_plan d_plan; //!< fixed after construction (but for auto's fallback)
    const std::unique_ptr<sink_mapping> d_mapping; //!< the input mode's
    stats_timer d_stats_timer;
    send_slots d_slots; //!< the current run's stream
    /*! tcp, rdma: the connections in d_slots (none otherwise or while closed), watched
     * by general_work(): a lost connection without reconnect ends the flowgraph. */
    std::vector<const send::link_stream*> d_links;
    sink_input d_input; //!< of one general_work()

    const pmt::pmt_t d_descriptors_port;
    const pmt::pmt_t d_stats_port;
    block_watch d_watch; //!< last: stops reading the rest before it goes
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SINK_IMPL_H */
