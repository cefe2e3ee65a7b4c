/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SINK_IMPL_H
#define INCLUDED_SPEAD_SINK_IMPL_H

#include "mapping/continuous_framer.h"
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

/*! GNU Radio glue: stream_to_heap (lib/mapping) frames the input and builds heaps
 * (continuous mode: continuous_framer timestamps them);
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
    /*! Sends due descriptors, then copies \p items items into a free slot and
     * starts its heap. \return the slot's index. */
    std::size_t fill_slot(const std::uint8_t* data, std::size_t items);
    /*! Hands a filled slot's heap to the stream (the slot frees itself when sent). */
    void send_slot(std::size_t index, std::uint64_t cnt, std::size_t substream);
    void release_slot(std::size_t index);
    /*! Tagged mode: one packet as one heap. */
    void send_packet(const std::uint8_t* data, std::size_t items);
    /*! Continuous mode: input \p input's heap of the current round. */
    void send_continuous_heap(std::size_t input, const std::uint8_t* data);
    /*! Continuous mode's work: whole rounds of one heap per input. */
    int continuous_work(const gr_vector_int& ninput_items,
                        const gr_vector_const_void_star& input_items);
    std::size_t max_input_items() const;
    void publish_stats_if_due(bool force);

    sink_plan d_plan; //!< fixed after construction (but for auto's fallback)
    stream_to_heap d_mapping;
    continuous_framer d_framer; //!< continuous mode only
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
    const pmt::pmt_t d_rx_time_key;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SINK_IMPL_H */
