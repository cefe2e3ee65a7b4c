/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The state of send::udp_ibv_stream's writer, shared by its two files:
// udp_ibv_stream.cc sets the queue up and builds and posts frames;
// udp_ibv_stream_completions.cc takes the completions back, waits for them, and
// recovers the queue after an error.

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_UDP_IBV_STREAM_IMPL_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_UDP_IBV_STREAM_IMPL_H

#include "async_events.h"
#include "common/file_descriptor.h"
#include "device_binding.h"
#include "protocol/packet_writer.h"
#include "send_regions.h"
#include "transport/endpoint.h"
#include "transport/network_interface.h"
#include "transport/raw_packet.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace gr {
namespace spead {
namespace send {

/*! Completions taken per ibv_poll_cq. */
constexpr int poll_batch = 16;
/*! How long the NIC may make no progress before the outstanding sends are abandoned:
 * far longer than any real transmit, short enough to report a dead device. */
constexpr auto stall_limit = std::chrono::seconds(5);
/*! Longest single wait on the completion channel, so stalls are noticed. */
constexpr int channel_wait_ms = 10;
/*! How long writes wait for a port that went down to come back before the heaps
 * fail (each later write fails at once until it is up). */
constexpr auto port_down_limit = std::chrono::seconds(5);

struct udp_ibv_stream::impl : packet_writer {
    using udp = boost::asio::ip::udp;

    impl(const stream_config& config, const udp_ibv_config& ibv_config);
    std::size_t write_packets(const packet* packets,
                              std::size_t n,
                              boost::system::error_code& ec) override;
    std::uint64_t reap_completions(bool wait,
                                   boost::system::error_code& ec,
                                   std::uint64_t written) override;

    void check_config(const stream_config& config, const udp_ibv_config& ibv_config);
    /*! The QP, with as many send WRs (slots) of the ring as the driver accepts. */
    void create_queue_pair(ibv_context* context);

    /*! SGEs for \p p: copies into the slot, zero-copy from regions. \return false
     * when the packet needs more SGEs than the QP takes. */
    bool gather(const packet& p, std::uint8_t* frame, ibv_send_wr& wr, bool& zero_copy);
    /*! Fills WR \p wr (and its slot) for \p p. \return true if zero-copy. */
    bool build(const packet& p, std::uint64_t sequence, ibv_send_wr& wr);
    /*! Posts the chain built so far; its last WR is signalled. */
    void post_chain(boost::system::error_code& ec);
    /*! Takes the completions there are; errors go to completion_error. \return how
     * many, or -1 if the CQ failed. */
    int poll_completions();
    /*! Waits (bounded) until \p target packets are complete. \return false after a
     * stall (\p ec says so; the outstanding packets were abandoned). */
    bool wait_for_completions(std::uint64_t target, boost::system::error_code& ec);
    /*! The NIC made no progress: flush or forget what is outstanding. */
    void abandon_outstanding();
    /*! Brings the QP back to RTS once nothing is outstanding (after an error). */
    void recover();
    /*! What the device reported (once per write): the port down (waits, bounded,
     * for it to come back), the QP in ERR (recovered), or the device dead.
     * \return false, with \p ec set, when nothing can be sent now */
    bool device_usable(boost::system::error_code& ec);
    /*! Takes and handles the device's events (\p now: read the fd at once). */
    void take_device_events(bool now);

    gr::logger logger;
    std::size_t max_packet_size;
    std::vector<udp::endpoint> endpoints;
    int max_poll;
    transport::network_interface iface;

    // Verbs objects, in creation order: C++ destroys them in reverse.
    std::optional<ibv::device_binding> binding;
    file_descriptor socket; //!< reserves the source port; primes ARP
    ibv::comp_channel_ptr channel;
    ibv::cq_ptr cq;
    ibv::pd_ptr pd;
    ibv::qp_ptr qp;
    ibv::mapping_ptr ring;
    ibv::mr_ptr ring_mr;
    ibv::send_regions regions; //!< the user's memory regions, registered
    std::unique_ptr<ibv::async_event_watch> events; //!< the device's async events

    bool checksum_offload = false;
    std::size_t slot_size = 0;
    std::size_t n_slots = 0;
    int max_sges = 1;
    std::uint64_t signal_interval = 1;
    std::vector<udp_frame_builder> builders; //!< by substream
    std::vector<ibv_send_wr> wrs;            //!< by slot
    std::vector<ibv_sge> sges;               //!< max_sges per slot

    // ---- writer thread only ----
    std::uint64_t posted = 0;         //!< packets handed to the NIC
    std::uint64_t completed = 0;      //!< packets the NIC is done with
    std::uint64_t last_signalled = 0; //!< posted count at the last signalled WR
    ibv_send_wr* chain_first = nullptr;
    ibv_send_wr* chain_last = nullptr;
    std::uint64_t chain_length = 0;
    bool qp_failed = false; //!< an error completion put the QP in ERR
    /*! First error found on completion since the last reap_completions(), which
     * reports it for the heaps it completes. */
    boost::system::error_code completion_error;
    std::uint64_t error_completions = 0;
    std::uint64_t error_completions_counted = 0; //!< of those, in packets_failed
    int last_logged_status = -1;
    bool port_down = false;
    std::chrono::steady_clock::time_point port_down_since{};
    bool device_dead = false; //!< fatal, removed or CQ overrun: every write fails
};

} // namespace send
} // namespace spead
} // namespace gr

#endif
