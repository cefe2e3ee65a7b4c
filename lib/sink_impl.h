/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SINK_IMPL_H
#define INCLUDED_SPEAD_SINK_IMPL_H

#include "mapping/sink_params.h"
#include "mapping/stats_timer.h"
#include "mapping/stream_to_heap.h"
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_stream.h>
#include <gnuradio/spead/sink.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace gr {
namespace spead {

/*! GNU Radio glue: stream_to_heap (lib/mapping) frames the input and builds heaps;
 * this copies each payload into a send slot, hands the heap to the send stream
 * (lib/streams) and opens and closes the stream with the flowgraph. */
class sink_impl : public sink
{
public:
    explicit sink_impl(const sink_params& params);
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

private:
    /*! A heap on its way out: owns the payload copy and the heap that points into it. */
    struct slot {
        std::vector<std::uint8_t> payload;
        std::optional<send::heap> heap;
        bool busy = false;
    };

    /*! Opens the stream on the planned transport (auto: falls back to udp). */
    void open_stream();
    void close_stream();
    void drain_descriptor_messages();
    /*! Sends a control heap (descriptors, start, stop) to every substream. */
    void send_control_heap(bool descriptors, bool stop);
    /*! Waits for a free slot (running completion handlers); interruptible. */
    std::size_t acquire_slot();
    void send_packet(const std::uint8_t* data, std::size_t items);
    std::size_t max_input_items() const;
    void publish_stats_if_due(bool force);

    sink_plan d_plan; //!< fixed after construction (but for auto's fallback)
    stream_to_heap d_mapping;
    stats_timer d_stats_timer;

    // ---- the current run (member order = destruction order, reversed) ----
    boost::asio::io_context d_io; //!< completion handlers run in work() / stop()
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> d_io_guard;
    std::vector<slot> d_slots;
    mutable std::mutex d_stream_mutex; //!< guards d_stream and d_last_stats for stats()
    std::unique_ptr<send::stream> d_stream;
    send_stats d_last_stats;
    std::size_t d_num_substreams = 1;
    std::vector<gr::tag_t> d_tags; //!< tags of one general_work window

    const pmt::pmt_t d_descriptors_port;
    const pmt::pmt_t d_stats_port;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SINK_IMPL_H */
