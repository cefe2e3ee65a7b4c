/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SINK_IMPL_H
#define INCLUDED_SPEAD_SINK_IMPL_H

#include "mapping/block_transport.h"
#include "mapping/item_type.h"
#include <gnuradio/spead/descriptor.h>
#include <gnuradio/spead/flavour.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_stream.h>
#include <gnuradio/spead/send_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <gnuradio/spead/sink.h>
#include <unordered_map>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

namespace gr {
namespace spead {

class sink_impl : public sink
{
public:
    sink_impl(const std::string& transport,
              const std::string& endpoints,
              const std::string& interface,
              std::size_t buffer_size,
              std::size_t max_packet_size,
              const std::string& item_type,
              std::size_t vlen,
              std::uint64_t payload_item,
              const std::string& len_tag_key,
              std::size_t heap_items,
              int ttl,
              double rate_gbps,
              const std::string& flavour,
              std::uint64_t heap_cnt_start,
              std::uint64_t heap_cnt_step,
              std::size_t descriptor_interval,
              const std::string& payload_name,
              const std::string& payload_description,
              const std::string& byte_order,
              bool send_stop_heap,
              const std::string& capture_file,
              double stats_interval,
              int comp_vector,
              int max_poll);
    ~sink_impl() override;

    bool start() override;
    bool stop() override;
    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

    std::map<std::string, std::uint64_t> stats() const override;
    std::uint64_t heaps() const override;
    std::uint64_t packets() const override;
    std::uint64_t bytes() const override;
    std::uint64_t data_heaps() const override { return d_data_heaps.load(); }
    std::uint64_t heaps_failed() const override;
    std::string active_transport() const override;

private:
    /*! A heap on its way out: owns the payload copy and the heap that points into it. */
    struct slot {
        std::vector<std::uint8_t> payload;
        std::optional<send::heap> heap;
        bool busy = false;
    };

    void validate_and_configure(const std::string& transport,
                                const std::string& endpoints,
                                const std::string& interface,
                                std::size_t buffer_size,
                                std::size_t max_packet_size,
                                std::size_t vlen,
                                std::uint64_t payload_item,
                                const std::string& len_tag_key,
                                std::size_t heap_items,
                                int ttl,
                                double rate_gbps,
                                const std::string& flavour,
                                std::uint64_t heap_cnt_start,
                                std::uint64_t heap_cnt_step,
                                const std::string& payload_name,
                                const std::string& capture_file,
                                double stats_interval,
                                int comp_vector,
                                int max_poll);
    void open_stream();
    void close_stream();

    void drain_descriptor_messages();
    void learn_descriptor(const descriptor& d);
    /*! Sends a control heap (descriptors, start, stop) to every substream. */
    void send_control_heap(bool descriptors, bool start, bool stop);
    /*! Waits for a free slot (running completion handlers); interruptible. */
    std::size_t acquire_slot();
    void send_packet(const std::uint8_t* data,
                     std::size_t items,
                     std::size_t first_tag,
                     std::size_t end_tag);
    /*! Resolves a tag key to an item id (0: not an item). */
    std::uint64_t item_id_for_key(const pmt::pmt_t& key);
    void warn_once(const std::string& what, const std::string& message);
    std::size_t max_input_items() const;
    void publish_stats_if_due(bool force);
    std::map<std::string, std::uint64_t> collect_stats_locked() const;
    std::uint64_t stat(send_stat s) const;

    // ---- configuration ----
    transport_kind d_transport = transport_kind::udp;
    send::stream_config d_stream_config;
    send::udp_config d_udp_config;
    send::udp_ibv_config d_ibv_config;
    std::string d_ibv_interface; //!< as given (name or address), for messages
    bool d_auto = false;         //!< transport auto: ibverbs may fall back to udp
    std::string d_capture_file;
    gr::spead::item_type d_item_type;
    std::size_t d_vlen;
    std::size_t d_itemsize = 1;
    std::uint64_t d_payload_item;
    pmt::pmt_t d_len_tag_key; //!< PMT_NIL: fixed heap_items
    std::size_t d_heap_items;
    gr::spead::flavour d_flavour;
    std::uint64_t d_cnt_start;
    std::uint64_t d_cnt_step;
    std::size_t d_descriptor_interval;
    std::string d_payload_name;
    std::string d_payload_description;
    byte_order_mode d_byte_order = byte_order_mode::as_is;
    bool d_send_stop_heap;
    std::chrono::duration<double> d_stats_interval;

    // ---- descriptors the sink sends and names it understands ----
    std::map<std::uint64_t, descriptor> d_descriptors; //!< learnt on the port
    std::unordered_map<std::string, std::uint64_t> d_name_to_id;
    std::size_t d_described_items = 0; //!< payload shape in the last descriptor sent
    bool d_descriptors_dirty = true;
    std::set<std::string> d_warned;

    // ---- the current run (member order = destruction order, reversed) ----
    boost::asio::io_context d_io; //!< completion handlers run in work() / stop()
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> d_io_guard;
    std::vector<slot> d_slots;
    mutable std::mutex d_stream_mutex; //!< guards d_stream and d_last_stats for stats()
    std::unique_ptr<send::stream> d_stream;
    send_stats d_last_stats;
    std::size_t d_num_substreams = 1;
    std::uint64_t d_next_cnt = 1;
    std::uint64_t d_next_control_cnt = 0;
    bool d_run_started = false; //!< the first heap of the run went out
    std::size_t d_heaps_since_descriptors = 0;
    std::size_t d_needed = 1;      //!< input items the next call needs
    std::uint64_t d_skip = 0;      //!< items still to drop (an oversized packet)
    std::vector<gr::tag_t> d_tags; //!< tags of one general_work window
    std::vector<std::pair<std::uint64_t, std::uint64_t>> d_immediates; //!< of one heap
    std::chrono::steady_clock::time_point d_next_stats;

    std::atomic<std::uint64_t> d_data_heaps{ 0 };
    std::atomic<std::uint64_t> d_control_heaps{ 0 };
    std::atomic<std::uint64_t> d_items_dropped_untagged{ 0 };
    std::atomic<std::uint64_t> d_packets_dropped_too_large{ 0 };
    std::atomic<std::uint64_t> d_heaps_rejected{ 0 };
    std::atomic<std::uint64_t> d_tags_too_wide{ 0 };

    const pmt::pmt_t d_heap_cnt_key;
    const pmt::pmt_t d_descriptors_port;
    const pmt::pmt_t d_stats_port;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SINK_IMPL_H */
