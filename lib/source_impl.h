/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SOURCE_IMPL_H
#define INCLUDED_SPEAD_SOURCE_IMPL_H

#include "mapping/block_transport.h"
#include "mapping/item_type.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/source.h>
#include <unordered_map>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

namespace gr {
namespace spead {

class source_impl : public source
{
public:
    source_impl(const std::string& transport,
                const std::string& endpoints,
                const std::string& interface,
                std::size_t buffer_size,
                std::size_t max_packet_size,
                const std::string& item_type,
                std::size_t vlen,
                std::uint64_t payload_item,
                const std::string& len_tag_key,
                std::size_t max_heap_size,
                std::size_t max_heaps,
                const std::string& incomplete_heaps,
                std::uint64_t timestamp_item,
                double sample_rate,
                double sync_time,
                const std::string& byte_order,
                bool stop_on_stop_heap,
                const std::string& capture_file,
                std::size_t queue_heaps,
                double stats_interval,
                int comp_vector,
                int max_poll);
    ~source_impl() override;

    bool start() override;
    bool stop() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

    std::map<std::string, std::uint64_t> stats() const override;
    std::uint64_t heaps() const override;
    std::uint64_t packets() const override;
    std::uint64_t heaps_output() const override { return d_heaps_output.load(); }
    std::uint64_t incomplete_heaps_evicted() const override;
    std::uint64_t heaps_dropped_queue_full() const override;
    std::uint64_t packets_dropped_socket_overflow() const override;
    std::uint64_t bytes_output() const override { return d_bytes_output.load(); }
    std::vector<std::string> bound_endpoints() const override;
    std::string active_transport() const override;

private:
    /*! What the block knows about an item id: its tag key and how to order its bytes. */
    struct item_info {
        pmt::pmt_t tag_key;
        bool has_descriptor = false;
        descriptor desc;
        std::size_t auto_swap_unit = 0; //!< 0: as it is; 2, 4, 8: swap in auto mode
        bool little_endian = false;     //!< numpy '<': a timestamp is read that way
    };

    /*! One contiguous piece of a heap's stream payload. */
    struct payload_piece {
        const std::uint8_t* data;
        std::size_t length;
        std::size_t swap_unit; //!< 0 or 1: copied as it is
    };

    void validate_and_configure(const std::string& transport,
                                const std::string& endpoints,
                                const std::string& interface,
                                std::size_t buffer_size,
                                std::size_t max_packet_size,
                                std::size_t vlen,
                                std::uint64_t payload_item,
                                std::size_t max_heap_size,
                                std::size_t max_heaps,
                                const std::string& incomplete_heaps,
                                std::uint64_t timestamp_item,
                                double sample_rate,
                                double sync_time,
                                bool stop_on_stop_heap,
                                const std::string& capture_file,
                                std::size_t queue_heaps,
                                double stats_interval,
                                int comp_vector,
                                int max_poll);
    /*! Settles which of udp and ibverbs the source uses: the transport parameter,
     * `auto` (preflight) and the environment overrides. */
    void choose_network_transport(const std::string& transport,
                                  std::string interface,
                                  std::size_t buffer_size,
                                  int comp_vector);
    void open_stream();
    void close_stream();

    item_info& info_for(std::uint64_t id);
    void learn_descriptors(const recv::heap& h);
    /*! Fills d_pieces from the heap; returns the payload bytes. */
    std::size_t collect_payload(const recv::heap& h);
    /*! Takes a new heap: metadata to the ports, payload located. False: nothing to
     * output (counted). */
    bool take_heap(const recv::heap& h);
    void write_heap(const recv::heap& h, std::uint8_t* out, std::uint64_t offset);
    bool timestamp_of(const recv::heap& h, std::uint64_t& value);
    pmt::pmt_t rx_time_of(std::uint64_t timestamp) const;
    void publish_heap_pdu(const recv::heap& h);
    void publish_stats_if_due(bool force);
    std::map<std::string, std::uint64_t> collect_stats_locked() const;
    std::uint64_t stat(recv_stat s) const;

    // ---- configuration (fixed after construction) ----
    transport_kind d_transport = transport_kind::udp;
    recv::udp_config d_udp_config;
    recv::udp_ibv_config d_ibv_config;
    std::string d_ibv_interface; //!< as given (name or address), for messages
    bool d_auto = false;         //!< transport auto: ibverbs may fall back to udp
    std::string d_capture_file;
    std::uint16_t d_capture_port = 0;
    recv::stream_config d_stream_config;
    gr::spead::item_type d_item_type;
    std::size_t d_vlen;
    std::size_t d_itemsize;
    std::size_t d_max_items; //!< items of the largest heap
    std::uint64_t d_payload_item;
    pmt::pmt_t d_len_tag_key; //!< PMT_NIL: no length tag
    std::uint64_t d_timestamp_item;
    double d_sample_rate;
    double d_sync_time;
    byte_order_mode d_byte_order;
    std::chrono::duration<double> d_stats_interval;

    // ---- the current run ----
    mutable std::mutex d_stream_mutex; //!< guards d_stream and d_last_stats for stats()
    std::unique_ptr<recv::stream> d_stream;
    recv_stats d_last_stats;
    std::vector<std::string> d_bound; //!< guarded by d_stream_mutex
    recv::heap d_pending;             //!< taken from the queue, waiting for output space
    std::size_t d_pending_items = 0;
    std::vector<payload_piece> d_pieces;
    std::unordered_map<std::uint64_t, item_info> d_items;
    item_info d_scratch_item; //!< for ids beyond the ones remembered
    bool d_items_full_warned = false;
    bool d_heaps_port_connected = false;
    std::atomic<std::uint64_t> d_heaps_output{ 0 };
    std::atomic<std::uint64_t> d_bytes_output{ 0 };
    std::atomic<std::uint64_t> d_heaps_without_payload{ 0 };
    std::atomic<std::uint64_t> d_heaps_dropped_partial_item{ 0 };
    std::atomic<std::uint64_t> d_heaps_dropped_too_large_for_output{ 0 };
    std::chrono::steady_clock::time_point d_next_stats;

    const pmt::pmt_t d_heap_cnt_key;
    const pmt::pmt_t d_incomplete_key;
    const pmt::pmt_t d_rx_time_key;
    const pmt::pmt_t d_descriptors_port;
    const pmt::pmt_t d_heaps_port;
    const pmt::pmt_t d_stats_port;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SOURCE_IMPL_H */
