/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::udp_ibv_reader: UDP over a raw-packet QP. The constructor sets the device up
// completely (flows steer into the posted receive queue, the queue is ready, groups
// are joined), so a frame that arrives before start() waits in the queue; the thread
// then polls the queue, hands the UDP payloads of each poll to the stream in one batch
// and gives the queue's memory back.
//
// The receive queue (receive_queue.h) is a multi-packet queue where the device offers
// one (striding_receive_queue.h), else a ring of slots (slot_receive_queue.h); the
// reader drives either the same way. Frames the NIC drops for want of posted memory
// never reach the CQ: nic_drop_counter.h counts them from the device. Its async events
// (async_events.h) are read once per drained batch and while waiting.

#include "async_events.h"
#include "common/file_descriptor.h"
#include "device_binding.h"
#include "multicast_memberships.h"
#include "nic_drop_counter.h"
#include "receive_queue.h"
#include "transport/endpoint.h"
#include "transport/raw_packet.h"
#include "transport/wake_event.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <system_error>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace spead {
namespace recv {

namespace {

using boost::asio::ip::udp;

/*! Completions taken per poll: one batch for the stream, one repost. */
constexpr int poll_batch = ibv::max_poll_batch;
/*! Longest wait on the completion channel; stop() also wakes it through an eventfd. */
constexpr int wait_timeout_ms = 100;
/*! Bound on the polls that hand over what is still in the queue when the reader
 * stops. */
constexpr int max_exit_polls = 1024;
/*! How long a reader whose poll or post failed waits for the device's async event
 * that names the cause (it may trail the failure). */
constexpr std::chrono::milliseconds failure_cause_wait{ 1000 };

std::string describe(const udp::endpoint& ep)
{
    return ep.address().to_string() + ":" + std::to_string(ep.port());
}

/*! Each endpoint once: a second identical flow would only split the counts. */
std::vector<udp::endpoint> unique_endpoints(const std::vector<udp::endpoint>& endpoints)
{
    std::vector<udp::endpoint> out;
    for (const auto& ep : endpoints)
        if (std::find(out.begin(), out.end(), ep) == out.end())
            out.push_back(ep);
    return out;
}

} // namespace

struct udp_ibv_reader::impl : loop {
    impl(udp_ibv_reader& self, const udp_ibv_config& config);

    // ---- setup (constructor) --------------------------------------------------------
    /*! \p config, once it has endpoints and an interface address. */
    static const udp_ibv_config& checked(const udp_ibv_config& config)
    {
        config.check_complete();
        return config;
    }
    void check_port();
    void check_buffer_size() const;
    void create_channel();
    /*! One flow per endpoint to the queue's QP, each with a packet counter (into
     * \p counters) when \p with_counters.
     * \return false if the device cannot count flows (nothing is left created then) */
    bool create_flows(bool with_counters,
                      std::vector<ibv::counters_ptr>& counters,
                      int& counters_error);
    void log_setup(const std::string& why_slots);

    // ---- the thread -----------------------------------------------------------------
    void run() override;
    void wake() override;
    recv_stats stats() const override;
    void busy_poll_loop();
    void interrupt_loop();
    /*! Waits (bounded) for a completion event or stop(); drains and acks the events. */
    void wait_for_completion_event();
    /*! One poll of the queue: frames to the stream, the queue's memory given back.
     * \return completions taken, or -1 once the stream has ended */
    int poll_once();
    /*! The per-packet work: parses the frames of the first \p n completions and
     * hands the payloads to the stream in one batch.
     * \return false once the stream has ended */
    bool handle_completions(int n);
    /*! Parses a frame; its payload becomes views[n_views++], or it is counted. */
    void
    take_frame(const std::uint8_t* frame, std::uint32_t length, std::size_t& n_views);
    /*! The batch's payloads to the stream. \return false once the stream has ended */
    bool hand_over(std::size_t n_views);
    void handle_error_completion(const ibv_wc& wc);
    /*! A frame over max_size + 42 bytes: counted, and the log says so once. */
    void count_oversize();
    /*! After an error completion the queue is in ERR: back to ready, all posted. */
    void recover_queue();
    /*! Device events (\p now: read at once): counted, recovered, or the end. */
    void device_events(bool now = false);
    /*! Polls until the queue is empty (bounded). */
    void drain();
    /*! On the way out: frames still in the queue go to the stream, and the drop
     * counters are read a last time, while nothing arrives, so the final count is
     * exact. */
    void drain_on_exit();

    void count(recv_stat s, std::uint64_t n = 1)
    {
        counts[static_cast<std::size_t>(s)].fetch_add(n, std::memory_order_relaxed);
    }

    udp_ibv_reader& self; //!< hands packets to the stream
    const udp_ibv_config config;
    gr::logger logger;
    const std::vector<udp::endpoint> endpoints;
    const std::size_t max_frame; //!< max_size + Ethernet, IPv4 and UDP headers
    int comp_vector = -1;        //!< as used: after the modulo; -1 busy polling

    // Verbs objects in creation order: C++ destroys them in reverse (memberships,
    // flows, their counters, the queue, PD, channel, device).
    ibv::device_binding device;
    ibv::comp_channel_ptr channel;
    ibv::pd_ptr pd;
    std::unique_ptr<ibv::receive_queue> queue;
    std::unique_ptr<ibv::nic_drop_counter> drops; //!< owns the flows' counters
    std::vector<ibv::flow_ptr> flows;
    ibv::multicast_memberships memberships; //!< the groups, joined through the kernel
    std::unique_ptr<ibv::async_event_watch> events; //!< the device's async events
    transport::wake_event waker;                    //!< stop() ends a wait at once

    std::array<ibv_wc, poll_batch> completions{};
    std::array<packet_view, poll_batch> views{};

    // Thread state.
    bool queue_failed = false;
    std::uint64_t error_completions = 0;
    bool warned_oversize = false;
    std::uint64_t frames_completed = 0; //!< frames the NIC put in the queue (any status)

    // Counters: written by the thread, read by transport_stats().
    std::array<std::atomic<std::uint64_t>, recv_stats::size> counts{};
};

udp_ibv_reader::impl::impl(udp_ibv_reader& self, const udp_ibv_config& config)
    : self(self),
      config(checked(config)),
      logger("spead udp_ibv_reader"),
      endpoints(unique_endpoints(config.get_endpoints())),
      max_frame(config.get_max_size() + udp_frame_overhead),
      device(config.get_interface_address().to_v4())
{
    check_port();
    check_buffer_size();
    create_channel();
    pd = ibv::alloc_pd(device.context());

    ibv::receive_queue_params params;
    params.pd = pd.get();
    params.channel = channel.get();
    params.comp_vector = comp_vector;
    params.buffer_size = config.get_buffer_size();
    params.max_frame = max_frame;
    std::string why_slots;
    queue = ibv::make_receive_queue(device, params, logger, why_slots);

    std::vector<ibv::counters_ptr> counters;
    int counters_error = 0;
    if (!create_flows(true, counters, counters_error))
        create_flows(false, counters, counters_error);
    drops = std::make_unique<ibv::nic_drop_counter>(
        device, std::move(counters), counters_error, logger);
    events = std::make_unique<ibv::async_event_watch>(device);
    queue->start();
    memberships = ibv::multicast_memberships(device, endpoints);
    log_setup(why_slots);
}

void udp_ibv_reader::impl::check_port()
{
    const ibv_port_attr port = device.query_port();
    if (port.link_layer != IBV_LINK_LAYER_ETHERNET)
        ibv::throw_error("port " + std::to_string(device.port_num()) + " of " +
                             device.device_name(),
                         EPROTONOSUPPORT,
                         "raw-packet receive needs an Ethernet port (RoCE mode); "
                         "switch the port's link type to Ethernet");
    if (port.state != IBV_PORT_ACTIVE)
        logger.warn("port {} of {} ({}) is not active: nothing arrives until the link "
                    "is up",
                    int(device.port_num()),
                    device.device_name(),
                    device.interface_name());
    if (!device.has_flow_steering())
        ibv::throw_error(device.device_name(),
                         EOPNOTSUPP,
                         "The device does not offer managed flow steering, which "
                         "raw-packet receive needs. ConnectX-3: set `options mlx4_core "
                         "log_num_mgm_entry_size=-1` and reload mlx4_core; see "
                         "docs/ibverbs.md");
}

void udp_ibv_reader::impl::check_buffer_size() const
{
    // The same rule whichever queue the device gives, so a configuration does not
    // work on one NIC and fail on another.
    const std::size_t requested = config.get_buffer_size();
    if (requested < max_frame)
        throw std::invalid_argument("buffer_size: " + std::to_string(requested) +
                                    " bytes holds no packet slot of max_size + 42 = " +
                                    std::to_string(max_frame) + " bytes; give at least " +
                                    std::to_string(max_frame) +
                                    " (0 = the default 16 MiB)");
}

void udp_ibv_reader::impl::create_channel()
{
    if (config.get_comp_vector() < 0)
        return;
    comp_vector = config.get_comp_vector() % device.num_comp_vectors();
    channel = ibv::create_comp_channel(device.context());
    // Drained until EAGAIN after each wake-up, so it must not block.
    const int flags = fcntl(channel->fd, F_GETFL);
    if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) != 0)
        ibv::throw_error("fcntl(O_NONBLOCK) on the completion channel", errno);
}

bool udp_ibv_reader::impl::create_flows(bool with_counters,
                                        std::vector<ibv::counters_ptr>& counters,
                                        int& counters_error)
{
    for (const auto& ep : endpoints) {
        ibv::counters_ptr counter;
        if (with_counters) {
            counter = ibv::create_flow_packet_counter(device.context(), counters_error);
            if (!counter)
                break;
        }
        try {
            flows.push_back(ibv::create_udp_flow(queue->qp(),
                                                 ep,
                                                 device.interface_mac(),
                                                 device.port_num(),
                                                 counter.get()));
        } catch (const std::system_error& e) {
            if (!with_counters)
                throw;
            // The device steers but will not count on a flow: try without counters.
            counters_error = e.code().value();
            break;
        }
        if (counter)
            counters.push_back(std::move(counter));
    }
    if (flows.size() == endpoints.size())
        return true;
    // Counting only some flows would make the drop count wrong: count none.
    flows.clear();
    counters.clear();
    return false;
}

void udp_ibv_reader::impl::log_setup(const std::string& why_slots)
{
    std::ostringstream list;
    for (std::size_t i = 0; i < endpoints.size(); i++)
        list << (i ? "," : "") << describe(endpoints[i]);
    std::string queue_text = queue->describe();
    if (!why_slots.empty())
        queue_text += " (no multi-packet receive queue: " + why_slots + ")";
    logger.info("receiving {} on {} port {} ({}, {}): {}, {}",
                list.str(),
                device.device_name(),
                int(device.port_num()),
                device.interface_address().to_string(),
                device.interface_name(),
                queue_text,
                comp_vector < 0 ? std::string("busy polling")
                                : "completion vector " + std::to_string(comp_vector));
}

// ---- the thread ---------------------------------------------------------------------

void udp_ibv_reader::impl::run()
{
    pthread_setname_np(pthread_self(), "spead-ibv-recv");
    try {
        comp_vector >= 0 ? interrupt_loop() : busy_poll_loop();
    } catch (const ibv::device_failure&) {
        throw; // its cause already named
    } catch (const std::exception& e) {
        // A fatal device, an overrun CQ or a QP in error makes verbs fail: say that,
        // not the verb, whichever thread saw the failure first.
        throw std::runtime_error(ibv::explain_failure(*events,
                                                      device,
                                                      queue->qp(),
                                                      queue->cq(),
                                                      queue->name(),
                                                      e.what(),
                                                      failure_cause_wait));
    }
    drain_on_exit();
}

void udp_ibv_reader::impl::device_events(bool now)
{
    const ibv::device_events e = events->take(queue->qp(), queue->cq(), now);
    if (!e.any())
        return;
    ibv::end_stream_if_unrecoverable(e, device, queue->name());
    count(recv_stat::ibv_port_down_events, e.port_errors);
    ibv::log_port_changes(e, device, logger, "receiving");
    if (e.qp_fatal)
        queue_failed = true; // recovered by the caller, as after an error completion
}

void udp_ibv_reader::impl::busy_poll_loop()
{
    int empty_polls = 0;
    while (!waker.woken()) {
        const int n = poll_once();
        if (n < 0)
            return; // the stream ended
        if (n < poll_batch) {
            drops->update(true, frames_completed);
            if (device_events(), queue_failed)
                recover_queue(); // IBV_EVENT_QP_FATAL with nothing to flush
        }
        if (n > 0) {
            empty_polls = 0;
        } else if (++empty_polls >= config.get_max_poll()) {
            empty_polls = 0;
            sched_yield(); // another thread on this core gets a turn
        }
    }
}

void udp_ibv_reader::impl::interrupt_loop()
{
    const int max_poll = config.get_max_poll();
    while (!waker.woken()) {
        int n = 0;
        for (int i = 0; i < max_poll; i++) {
            if (i == max_poll - 1) {
                // Arm before the last poll: notification is edge-triggered, so a
                // completion between a poll and the arming would never wake us.
                const int status = ibv_req_notify_cq(queue->cq(), 0);
                if (status != 0)
                    throw std::system_error(
                        status,
                        std::generic_category(),
                        "ibv_req_notify_cq (the completion queue cannot wake the "
                        "reader; check the device with spead_ibv_check, or use "
                        "comp_vector -1 for busy polling)");
            }
            n = poll_once();
            if (n < 0)
                return; // the stream ended
            if (n < poll_batch) {
                drops->update(true, frames_completed);
                if (i < max_poll - 2)
                    i = max_poll - 2; // drained: go straight to the armed last poll
            }
        }
        device_events();
        if (n == 0)
            wait_for_completion_event();
        if (queue_failed)
            recover_queue(); // IBV_EVENT_QP_FATAL with nothing to flush
    }
}

void udp_ibv_reader::impl::wait_for_completion_event()
{
    pollfd fds[3] = { { channel->fd, POLLIN, 0 },
                      { waker.fd(), POLLIN, 0 },
                      { events->fd(), POLLIN, 0 } };
    const int ready = poll(fds, 3, wait_timeout_ms);
    if (ready < 0 && errno != EINTR)
        throw std::system_error(errno,
                                std::generic_category(),
                                "poll on the completion channel (check the device "
                                "with spead_ibv_check, or use comp_vector -1 for busy "
                                "polling)");
    if (ready > 0 && (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)))
        // Otherwise every poll() would return at once and the reader would spin.
        throw std::runtime_error(
            "the completion channel's descriptor failed (closed or replaced under the "
            "reader); make the source again, or use comp_vector -1 for busy polling");
    if (ready > 0 && (fds[2].revents & POLLIN))
        device_events(true);
    if (ready <= 0 || !(fds[0].revents & POLLIN))
        return;
    // Acknowledged at once: a CQ with unacknowledged events cannot be destroyed.
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    unsigned int events = 0;
    while (ibv_get_cq_event(channel.get(), &cq, &cq_context) == 0)
        events++;
    if (events > 0)
        ibv_ack_cq_events(queue->cq(), events);
}

int udp_ibv_reader::impl::poll_once()
{
    int frames = 0;
    const int n = queue->poll(completions.data(), poll_batch, frames);
    if (n == 0)
        return 0;
    const bool open = handle_completions(frames);
    if (queue_failed) {
        device_events(true); // a fatal device or overrun CQ cannot be recovered
        recover_queue();
    } else
        queue->repost();
    return open ? n : -1;
}

bool udp_ibv_reader::impl::handle_completions(int n)
{
    std::size_t n_views = 0;
    for (int i = 0; i < n; i++) {
        const ibv_wc& wc = completions[i];
        if (wc.status != IBV_WC_SUCCESS) {
            handle_error_completion(wc);
            continue;
        }
        frames_completed++;
        // A multi-packet queue takes any frame a WQE holds; max_size still rejects
        // larger ones (a slot is max_frame bytes: the NIC refuses what is larger).
        if (wc.byte_len > max_frame) {
            count_oversize();
            continue;
        }
        take_frame(reinterpret_cast<const std::uint8_t*>(wc.wr_id), wc.byte_len, n_views);
    }
    // Parsed in place in the queue's memory; the stream copies the payloads, after
    // which the memory can go back to the NIC.
    return hand_over(n_views);
}

void udp_ibv_reader::impl::take_frame(const std::uint8_t* frame,
                                      std::uint32_t length,
                                      std::size_t& n_views)
{
    udp_datagram datagram;
    const frame_result r = parse_udp_frame(frame, length, link_type::ethernet, datagram);
    if (r != frame_result::ok) {
        count(stat_for(r));
        return;
    }
    views[n_views].data = datagram.payload;
    views[n_views].size = datagram.payload_size;
    n_views++;
}

bool udp_ibv_reader::impl::hand_over(std::size_t n_views)
{
    return n_views > 0 ? self.add_packets(views.data(), n_views)
                       : !self.get_stream().is_stopped();
}

void udp_ibv_reader::impl::count_oversize()
{
    count(recv_stat::datagrams_oversize);
    if (warned_oversize)
        return;
    warned_oversize = true;
    logger.warn("a frame longer than max_size {} + 42 = {} bytes arrived and was dropped "
                "(datagrams_oversize); raise max_size to the senders' packet size",
                config.get_max_size(),
                max_frame);
}

void udp_ibv_reader::impl::handle_error_completion(const ibv_wc& wc)
{
    // Any error moves the QP to ERR (IB spec); the rest of its WRs flush.
    queue_failed = true;
    if (wc.status == IBV_WC_WR_FLUSH_ERR)
        return;         // posted memory returned unused
    frames_completed++; // a frame took the memory
    if (wc.status == IBV_WC_LOC_LEN_ERR) {
        count_oversize();
        return;
    }
    error_completions++;
    // Rare by nature (a bug or a broken device): the first, then every power of two.
    if ((error_completions & (error_completions - 1)) == 0)
        logger.error("receive completion failed: {} (vendor error {:#x}); {} so far",
                     ibv_wc_status_str(wc.status),
                     wc.vendor_err,
                     error_completions);
}

void udp_ibv_reader::impl::recover_queue()
{
    queue_failed = false;
    logger.warn("the {} went to the error state; resetting it and posting all its "
                "memory again (frames arriving meanwhile are dropped and counted)",
                queue->name());
    try {
        queue->reset();
    } catch (const std::exception& e) {
        throw std::runtime_error(
            std::string("the ") + queue->name() +
            " went to the error state and could not be reset: " + e.what() +
            "; check the device with spead_ibv_check and make the "
            "source again");
    }
    count(recv_stat::ibv_qp_recoveries); // once the queue receives again
}

void udp_ibv_reader::impl::drain()
{
    // Bounded: a sender that keeps going must not keep the reader from stopping.
    for (int i = 0; i < max_exit_polls; i++) {
        // -1: the stream has ended and counts what it is still handed.
        const int n = poll_once();
        if (n >= 0 && n < poll_batch)
            return;
    }
}

void udp_ibv_reader::impl::drain_on_exit()
{
    // Frames already in the queue go to the stream (which counts them in
    // packets_after_stop if it has ended).
    drain();
    drops->reconcile([this] {
        drain();
        return frames_completed;
    });
}

// ---- the public class ---------------------------------------------------------------

void udp_ibv_reader::impl::wake() { waker.wake(); }

recv_stats udp_ibv_reader::impl::stats() const
{
    recv_stats out;
    for (std::size_t i = 0; i < recv_stats::size; i++)
        out[static_cast<recv_stat>(i)] = counts[i].load(std::memory_order_relaxed);
    out[recv_stat::frames_dropped_no_buffer] = drops->dropped();
    // Which receive queue this reader chose, for anyone reading the stats.
    out[recv_stat::ibv_multi_packet_queues] = queue->multi_packet() ? 1 : 0;
    return out;
}

udp_ibv_reader::udp_ibv_reader(stream& owner, const udp_ibv_config& config)
    : transport_reader(owner)
{
    set_loop(std::make_unique<impl>(*this, config));
}

std::size_t udp_ibv_reader::get_buffer_size() const
{
    return loop_as<impl>().queue->buffer_size();
}

bool udp_ibv_reader::uses_multi_packet_receive_queue() const
{
    return loop_as<impl>().queue->multi_packet();
}

int udp_ibv_reader::get_comp_vector() const { return loop_as<impl>().comp_vector; }

} // namespace recv
} // namespace spead
} // namespace gr
