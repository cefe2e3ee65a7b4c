/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::udp_ibv_reader: UDP over a raw-packet QP. The constructor sets the device up
// completely (flows steer into posted slots, the QP is in RTR, groups are joined), so a
// frame that arrives before start() waits in the ring; the thread then polls the
// receive CQ, hands the UDP payloads of each poll to the stream in one batch and
// reposts their slots in one chained ibv_post_recv.
//
// Where the device offers a striding RQ (mlx5 direct verbs: ConnectX-4 Lx and later
// with an upstream kernel, or MLNX OFED), the ring is a multi-packet receive queue
// instead (striding_receive_queue.h): each frame takes only the 64-byte strides it
// needs, and frames are parsed in place there. GR_SPEAD_IBV_MPRQ=0 forces the slots.
//
// Frames the NIC drops for want of a posted slot never reach the CQ. They are counted
// from per-flow packet counters (frames matched − frames completed), or else from the
// port's out_of_buffer counter, or, when the device offers neither, not at all, as the
// log then says once.

#include "striding_receive_queue.h"
#include "transport/endpoint.h"
#include "transport/file_descriptor.h"
#include "transport/raw_packet.h"
#include "verbs.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {
namespace recv {

namespace {

using boost::asio::ip::udp;
using steady_clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

/*! Completions taken per ibv_poll_cq: one batch for the stream, one repost chain. */
constexpr int poll_batch = 64;
/*! Longest wait on the completion channel; stop() also wakes it through an eventfd. */
constexpr int wait_timeout_ms = 100;
/*! How often the NIC's drop counters are read while receiving. */
constexpr auto drop_count_interval = 100ms;
/*! A frame's completion reaches the CQ within this time after the NIC counted the
 * frame (a DMA write: microseconds on hardware). */
constexpr auto completion_settle_time = 1ms;
/*! Bound on the polls that hand over what is still in the ring when the reader stops. */
constexpr int max_exit_polls = 1024;
/*! Bound on the attempts to read the flow counters while nothing arrives, at exit. */
constexpr int max_exit_reconciliations = 20;

/*! Where frames_dropped_no_buffer comes from. */
enum class drop_source {
    flow_counters, //!< per-flow packet counters: matched − completed, exact per reader
    port_counter,  //!< sysfs hw_counters/out_of_buffer of the port: port-wide
    none,          //!< the device offers neither: not counted
};

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

struct udp_ibv_reader::impl {
    impl(udp_ibv_reader& self, const udp_ibv_config& config);

    // ---- setup (constructor) --------------------------------------------------------
    static const udp_ibv_config& checked(const udp_ibv_config& config);
    /*! Whether to use a striding RQ; \p why says why not. */
    bool want_striding_rq(ibv::striding_rq_support& support, std::string& why) const;
    /*! The striding RQ, or nothing (with a warning) when it cannot be set up. */
    void create_striding_queue(const ibv::striding_rq_support& support);
    void create_channel();
    void check_buffer_size() const;
    ibv_qp* receive_qp() const { return striding ? striding->qp() : qp.get(); }
    ibv_cq* receive_cq() const { return striding ? striding->cq() : recv_cq.get(); }
    void size_ring();
    void create_queues();
    /*! One flow per endpoint, each with a packet counter when \p with_counters.
     * \return false if the device cannot count flows (nothing is left created then) */
    bool create_flows(bool with_counters, int& counters_error);
    void choose_drop_source(int counters_error);
    void create_ring();
    void post_all_slots();
    void join_groups();

    // ---- the thread -----------------------------------------------------------------
    void run();
    void busy_poll_loop();
    void interrupt_loop();
    /*! Waits (bounded) for a completion event or stop(); drains and acks the events. */
    void wait_for_completion_event();
    /*! One ibv_poll_cq: frames to the stream, slots reposted.
     * \return completions taken, or -1 once the stream has ended or the CQ failed */
    int poll_once();
    /*! poll_once() for the striding RQ. */
    int poll_striding_once();
    /*! handle_completions() for the striding RQ: frames parsed in place in the strides
     * and handed over. \return false once the stream has ended */
    bool handle_striding_completions(int n);
    /*! The per-packet work: parses each frame, hands the payloads to the stream in one
     * batch, chains the slots for reposting. \return false once the stream has ended */
    bool handle_completions(int n, int& reposts);
    /*! Parses a frame; its payload becomes views[n_views++], or it is counted. */
    void
    take_frame(const std::uint8_t* frame, std::uint32_t length, std::size_t& n_views);
    /*! The batch's payloads to the stream. \return false once the stream has ended */
    bool hand_over(std::size_t n_views);
    void handle_error_completion(const ibv_wc& wc);
    /*! A frame over max_size + 42 bytes: counted, and the log says so once. */
    void count_oversize();
    /*! After an error completion the QP is in ERR: back to RTR with every slot posted. */
    void recover_queue_pair();
    /*! On the way out: frames still in the ring go to the stream, and the drop counters
     * are read a last time, while nothing arrives, so the final count is exact. */
    void drain_on_exit();

    // ---- NIC drop counting ----------------------------------------------------------
    /*! Reads the counters every drop_count_interval; \p cq_drained: the last poll
     * found the CQ empty. */
    void update_drop_count(bool cq_drained);
    bool read_matched_frames(std::uint64_t& matched);
    void read_port_drops();
    void publish_drops(std::uint64_t dropped);

    void count(recv_stat s, std::uint64_t n = 1)
    {
        counts[static_cast<std::size_t>(s)].fetch_add(n, std::memory_order_relaxed);
    }

    udp_ibv_reader& self; //!< hands packets to the stream
    const udp_ibv_config config;
    gr::logger logger;
    const std::vector<udp::endpoint> endpoints;
    const std::size_t slot_size; //!< max_size + Ethernet, IPv4 and UDP headers
    std::size_t slots = 0;
    int comp_vector = -1; //!< as used: after the modulo; -1 busy polling

    // Verbs objects in creation order: C++ destroys them in reverse (memberships,
    // flows, counters, MR, ring, QP, PD, CQs, channel, device).
    ibv::device_binding device;
    ibv::comp_channel_ptr channel;
    ibv::cq_ptr recv_cq;
    ibv::cq_ptr send_cq;
    ibv::pd_ptr pd;
    ibv::qp_ptr qp;
    std::unique_ptr<ibv::striding_receive_queue> striding; //!< instead of qp and ring
    ibv::mapping_ptr ring;
    ibv::mr_ptr mr;
    std::vector<ibv::counters_ptr> flow_counters;
    std::vector<ibv::flow_ptr> flows;
    std::vector<transport::file_descriptor> memberships; //!< kernel sockets in the groups
    transport::file_descriptor wake; //!< eventfd: stop() ends a wait at once

    // Work requests, one per slot, built once; reposting only relinks them.
    std::vector<ibv_sge> sges;
    std::vector<ibv_recv_wr> wrs;
    std::array<ibv_wc, poll_batch> completions{};
    std::array<packet_view, poll_batch> views{};
    std::array<std::uint32_t, poll_batch> repost_slots{};
    std::array<ibv::striding_receive_queue::completion, poll_batch>
        striding_completions{};

    // Thread state.
    bool qp_failed = false;
    std::uint64_t error_completions = 0;
    bool warned_oversize = false;
    std::uint64_t frames_completed = 0; //!< frames the NIC put in a slot (any status)
    drop_source drops_from = drop_source::none;
    std::string striding_failure; //!< why a striding RQ the device offers was not used
    bool drop_read_pending = false;
    std::uint64_t pending_matched = 0;
    steady_clock::time_point pending_since{};
    steady_clock::time_point last_drop_read{};
    bool warned_counter_read = false;
    std::uint64_t port_drops_last_raw = 0;
    std::uint64_t port_drops = 0;

    // Counters: written by the thread, read by transport_stats().
    std::array<std::atomic<std::uint64_t>, recv_stats::size> counts{};

    std::atomic<bool> stopping{ false }; //!< set by wake()
};

const udp_ibv_config& udp_ibv_reader::impl::checked(const udp_ibv_config& config)
{
    if (config.get_endpoints().empty())
        throw std::invalid_argument("endpoints: none given; set at least one, e.g. "
                                    "239.1.2.3:7148, 239.1.2.3+3:7148 or 0.0.0.0:7148");
    const auto& address = config.get_interface_address();
    if (!address.is_v4() || address.is_unspecified())
        throw std::invalid_argument(
            "interface_address: none given; the ibverbs transport needs the IPv4 "
            "address (or netdev name, with set_interface) of the NIC's interface");
    return config;
}

udp_ibv_reader::impl::impl(udp_ibv_reader& self, const udp_ibv_config& config)
    : self(self),
      config(checked(config)),
      logger("spead udp_ibv_reader"),
      endpoints(unique_endpoints(config.get_endpoints())),
      slot_size(config.get_max_size() + udp_frame_overhead),
      device(config.get_interface_address().to_v4())
{
    wake = transport::file_descriptor(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake)
        ibv::throw_error("eventfd", errno);

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

    check_buffer_size();
    ibv::striding_rq_support support;
    std::string no_striding_why;
    create_channel();
    if (want_striding_rq(support, no_striding_why))
        create_striding_queue(support);
    if (!striding) {
        size_ring();
        create_queues();
        ibv::modify_qp(qp.get(), IBV_QPS_INIT, device.port_num());
    }
    int counters_error = 0;
    if (!create_flows(true, counters_error))
        create_flows(false, counters_error);
    choose_drop_source(counters_error);
    if (striding) {
        striding->start();
    } else {
        create_ring();
        post_all_slots();
        ibv::modify_qp(qp.get(), IBV_QPS_RTR);
    }
    join_groups();

    std::ostringstream list;
    for (std::size_t i = 0; i < endpoints.size(); i++)
        list << (i ? "," : "") << describe(endpoints[i]);
    std::ostringstream queue;
    if (striding)
        queue << "multi-packet receive queue (striding RQ) of " << striding->wqe_count()
              << " WQEs x " << striding->strides_per_wqe() << " strides of "
              << striding->stride_size() << " bytes = " << striding->buffer_size()
              << " bytes";
    else
        queue << slots << " slots of " << slot_size << " bytes (no multi-packet receive "
              << "queue: "
              << (striding_failure.empty() ? no_striding_why : striding_failure) << ")";
    logger.info("receiving {} on {} port {} ({}, {}): {}, {}",
                list.str(),
                device.device_name(),
                int(device.port_num()),
                device.interface_address().to_string(),
                device.interface_name(),
                queue.str(),
                comp_vector < 0 ? std::string("busy polling")
                                : "completion vector " + std::to_string(comp_vector));
}

bool udp_ibv_reader::impl::want_striding_rq(ibv::striding_rq_support& support,
                                            std::string& why) const
{
    support = ibv::query_striding_rq(device.context());
    why = support.reason;
    return support.usable;
}

void udp_ibv_reader::impl::create_striding_queue(const ibv::striding_rq_support& support)
{
    pd = ibv::alloc_pd(device.context());
    std::string clamped;
    try {
        striding = std::make_unique<ibv::striding_receive_queue>(device,
                                                                 support,
                                                                 pd.get(),
                                                                 channel.get(),
                                                                 comp_vector,
                                                                 config.get_buffer_size(),
                                                                 slot_size,
                                                                 clamped);
    } catch (const std::system_error& e) {
        // The device said it could; fixed slots still work.
        striding_failure = e.what();
        logger.warn("the device offers a multi-packet receive queue, but setting one up "
                    "failed ({}); using fixed slots of max_size + 42 bytes",
                    e.what());
        return;
    }
    if (!clamped.empty())
        logger.warn("buffer_size: {} bytes is more than device {} allows ({}); using {} "
                    "bytes",
                    config.get_buffer_size(),
                    device.device_name(),
                    clamped,
                    striding->buffer_size());
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

void udp_ibv_reader::impl::check_buffer_size() const
{
    // The same rule whichever queue the device gives, so a configuration does not
    // work on one NIC and fail on another.
    const std::size_t requested = config.get_buffer_size();
    if (requested < slot_size)
        throw std::invalid_argument("buffer_size: " + std::to_string(requested) +
                                    " bytes holds no packet slot of max_size + 42 = " +
                                    std::to_string(slot_size) + " bytes; give at least " +
                                    std::to_string(slot_size) +
                                    " (0 = the default 16 MiB)");
}

void udp_ibv_reader::impl::size_ring()
{
    const std::size_t requested = config.get_buffer_size();
    slots = requested / slot_size;

    // One receive WR and one CQ entry per slot, one MR for the ring.
    const ibv_device_attr attr = device.query_device();
    std::size_t limit = slots;
    std::string limiting;
    const auto clamp = [&](std::size_t device_limit, const char* name) {
        if (device_limit < limit) {
            limit = device_limit;
            limiting = name;
        }
    };
    clamp(std::size_t(std::max(attr.max_qp_wr, 1)), "max_qp_wr, receive work requests");
    clamp(std::size_t(std::max(attr.max_cqe, 1)), "max_cqe, completion queue entries");
    clamp(std::size_t(std::max<std::uint64_t>(attr.max_mr_size / slot_size, 1)),
          "max_mr_size, bytes in one memory region");
    if (limit < slots) {
        logger.warn("buffer_size: {} bytes would be {} slots of {} bytes, more than "
                    "device {} allows ({}); using {} slots = {} bytes",
                    requested,
                    slots,
                    slot_size,
                    device.device_name(),
                    limiting,
                    limit,
                    limit * slot_size);
        slots = limit;
    }
}

void udp_ibv_reader::impl::create_queues()
{
    ibv_context* context = device.context();
    recv_cq = ibv::create_cq(
        context, int(slots), channel.get(), comp_vector < 0 ? 0 : comp_vector);
    // A RAW_PACKET QP needs a send queue; this one never sends.
    send_cq = ibv::create_cq(context, 1, nullptr, 0);
    if (!pd)
        pd = ibv::alloc_pd(context);
    ibv_qp_cap cap{};
    cap.max_send_wr = 1;
    cap.max_send_sge = 1;
    cap.max_recv_wr = std::uint32_t(slots);
    cap.max_recv_sge = 1;
    qp = ibv::create_raw_packet_qp(pd.get(), send_cq.get(), recv_cq.get(), cap);
}

bool udp_ibv_reader::impl::create_flows(bool with_counters, int& counters_error)
{
    for (const auto& ep : endpoints) {
        ibv::counters_ptr counter;
        if (with_counters) {
            counter = ibv::create_flow_packet_counter(device.context(), counters_error);
            if (!counter)
                break;
        }
        try {
            flows.push_back(ibv::create_udp_flow(receive_qp(),
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
            flow_counters.push_back(std::move(counter));
    }
    if (flows.size() == endpoints.size())
        return true;
    // Counting only some flows would make the drop count wrong: count none.
    flows.clear();
    flow_counters.clear();
    return false;
}

void udp_ibv_reader::impl::choose_drop_source(int counters_error)
{
    if (!flow_counters.empty()) {
        drops_from = drop_source::flow_counters;
        return;
    }
    const std::string path = device.port_counter_path("out_of_buffer");
    const int port_error = ibv::read_counter_file(path, port_drops_last_raw);
    if (port_error == 0) {
        drops_from = drop_source::port_counter;
        logger.info("frames_dropped_no_buffer counts the port's out_of_buffer counter "
                    "({}), which is port-wide: drops of other receivers on port {} of "
                    "{} count too (the device has no flow counters: {})",
                    path,
                    int(device.port_num()),
                    device.device_name(),
                    std::strerror(counters_error));
        return;
    }
    drops_from = drop_source::none;
    logger.warn("frames_dropped_no_buffer cannot be counted on {}: it has no flow "
                "counters (ibv_create_counters: {}) and no out_of_buffer port counter "
                "({}: {}); frames the NIC drops for want of a posted slot go uncounted",
                device.device_name(),
                std::strerror(counters_error),
                path,
                std::strerror(port_error));
}

void udp_ibv_reader::impl::create_ring()
{
    const std::size_t bytes = slots * slot_size;
    ring = ibv::allocate_ring(bytes);
    mr = ibv::register_memory(pd.get(), ring.get(), bytes, IBV_ACCESS_LOCAL_WRITE);
    sges.resize(slots);
    wrs.resize(slots);
    for (std::size_t i = 0; i < slots; i++) {
        sges[i].addr = reinterpret_cast<std::uintptr_t>(ring.get() + i * slot_size);
        sges[i].length = std::uint32_t(slot_size);
        sges[i].lkey = mr->lkey;
        wrs[i].wr_id = i;
        wrs[i].sg_list = &sges[i];
        wrs[i].num_sge = 1;
    }
}

void udp_ibv_reader::impl::post_all_slots()
{
    for (std::size_t i = 0; i < slots; i++)
        wrs[i].next = i + 1 < slots ? &wrs[i + 1] : nullptr;
    ibv_recv_wr* bad = nullptr;
    const int status = ibv_post_recv(qp.get(), &wrs[0], &bad);
    if (status != 0)
        ibv::throw_error("ibv_post_recv(" + std::to_string(slots) + " slots)", status);
}

void udp_ibv_reader::impl::join_groups()
{
    // The NIC steers multicast by flow; the kernel only has to tell the switch (IGMP)
    // that this host wants the groups. A socket holds a limited number of memberships
    // (net.ipv4.igmp_max_memberships, 20 by default): open another when one is full.
    const unsigned int ifindex = if_nametoindex(device.interface_name().c_str());
    for (const auto& ep : endpoints) {
        if (!ep.address().is_multicast())
            continue;
        ip_mreqn request{};
        request.imr_multiaddr.s_addr = htonl(ep.address().to_v4().to_uint());
        request.imr_address.s_addr = htonl(device.interface_address().to_uint());
        request.imr_ifindex = int(ifindex);
        for (int attempt = 0;; attempt++) {
            if (memberships.empty() || attempt > 0) {
                transport::file_descriptor fd(
                    socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
                if (!fd)
                    ibv::throw_error("socket for multicast membership", errno);
                memberships.push_back(std::move(fd));
            }
            if (setsockopt(memberships.back().get(),
                           IPPROTO_IP,
                           IP_ADD_MEMBERSHIP,
                           &request,
                           sizeof(request)) == 0)
                break;
            const int err = errno;
            if (err == EADDRINUSE)
                break; // already a member (the same group on another port)
            if (err != ENOBUFS || attempt > 0)
                ibv::throw_error("joining multicast group " + ep.address().to_string() +
                                     " on " + device.interface_name(),
                                 err);
        }
    }
}

// ---- the thread ---------------------------------------------------------------------

void udp_ibv_reader::impl::run()
{
    pthread_setname_np(pthread_self(), "spead-ibv-recv");
    last_drop_read = steady_clock::now();
    if (comp_vector >= 0)
        interrupt_loop();
    else
        busy_poll_loop();
    drain_on_exit();
}

void udp_ibv_reader::impl::busy_poll_loop()
{
    int empty_polls = 0;
    while (!stopping.load(std::memory_order_relaxed)) {
        const int n = poll_once();
        if (n < 0)
            return; // the stream ended
        if (n < poll_batch)
            update_drop_count(true);
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
    while (!stopping.load(std::memory_order_relaxed)) {
        int n = 0;
        for (int i = 0; i < max_poll; i++) {
            if (i == max_poll - 1) {
                // Arm before the last poll: notification is edge-triggered, so a
                // completion between a poll and the arming would never wake us.
                const int status = ibv_req_notify_cq(receive_cq(), 0);
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
                update_drop_count(true);
                if (i < max_poll - 2)
                    i = max_poll - 2; // drained: go straight to the armed last poll
            }
        }
        if (n == 0)
            wait_for_completion_event();
    }
}

void udp_ibv_reader::impl::wait_for_completion_event()
{
    pollfd fds[2] = { { channel->fd, POLLIN, 0 }, { wake.get(), POLLIN, 0 } };
    const int ready = poll(fds, 2, wait_timeout_ms);
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
    if (ready <= 0 || !(fds[0].revents & POLLIN))
        return;
    // Acknowledged at once: a CQ with unacknowledged events cannot be destroyed.
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    unsigned int events = 0;
    while (ibv_get_cq_event(channel.get(), &cq, &cq_context) == 0)
        events++;
    if (events > 0)
        ibv_ack_cq_events(receive_cq(), events);
}

int udp_ibv_reader::impl::poll_once()
{
    if (striding)
        return poll_striding_once();
    const int n = ibv_poll_cq(recv_cq.get(), poll_batch, completions.data());
    if (n < 0)
        throw std::runtime_error(
            "ibv_poll_cq failed (a completion queue overrun, or the device was "
            "removed); check the device with spead_ibv_check and make the source again");
    if (n == 0)
        return 0;
    int reposts = 0;
    const bool open = handle_completions(n, reposts);
    if (qp_failed) {
        recover_queue_pair();
    } else if (reposts > 0) {
        ibv_recv_wr* bad = nullptr;
        const int status = ibv_post_recv(qp.get(), &wrs[repost_slots[0]], &bad);
        if (status != 0)
            throw std::system_error(status,
                                    std::generic_category(),
                                    "ibv_post_recv (the receive ring cannot be "
                                    "refilled; check the device with spead_ibv_check "
                                    "and make the source again)");
    }
    return open ? n : -1;
}

int udp_ibv_reader::impl::poll_striding_once()
{
    const int n = striding->poll(striding_completions.data(), poll_batch);
    if (n == 0)
        return 0;
    const bool open = handle_striding_completions(n);
    if (qp_failed)
        recover_queue_pair();
    else
        striding->repost_finished();
    return open ? n : -1;
}

bool udp_ibv_reader::impl::handle_striding_completions(int n)
{
    std::size_t n_views = 0;
    for (int i = 0; i < n; i++) {
        const auto& c = striding_completions[i];
        if (c.status != IBV_WC_SUCCESS) {
            ibv_wc wc{};
            wc.status = c.status;
            handle_error_completion(wc);
            continue;
        }
        if (c.filler)
            continue; // the rest of a WQE, skipped by the NIC
        frames_completed++;
        // The NIC takes any frame a WQE holds; max_size still rejects larger ones.
        if (c.length > slot_size) {
            count_oversize();
            continue;
        }
        take_frame(c.frame, c.length, n_views);
    }
    // Parsed in place in the strides; the stream copies the payloads, after which the
    // used-up WQEs can go back to the NIC.
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

bool udp_ibv_reader::impl::handle_completions(int n, int& reposts)
{
    std::size_t n_views = 0;
    std::uint8_t* const base = ring.get();
    for (int i = 0; i < n; i++) {
        const ibv_wc& wc = completions[i];
        const auto slot = std::uint32_t(wc.wr_id);
        if (wc.status != IBV_WC_SUCCESS) {
            handle_error_completion(wc);
            repost_slots[reposts++] = slot;
            continue;
        }
        frames_completed++;
        repost_slots[reposts++] = slot;
        take_frame(base + std::size_t(slot) * slot_size, wc.byte_len, n_views);
    }
    // The stream copies the payloads, so the slots can be reposted afterwards.
    const bool open = hand_over(n_views);
    for (int i = 0; i + 1 < reposts; i++)
        wrs[repost_slots[i]].next = &wrs[repost_slots[i + 1]];
    if (reposts > 0)
        wrs[repost_slots[reposts - 1]].next = nullptr;
    return open;
}

void udp_ibv_reader::impl::count_oversize()
{
    count(recv_stat::datagrams_oversize);
    if (warned_oversize)
        return;
    warned_oversize = true;
    logger.warn(
        "a frame longer than max_size {} + 42 = {} bytes{} arrived and was "
        "dropped (datagrams_oversize); raise max_size to the senders' packet size",
        config.get_max_size(),
        slot_size,
        striding ? "" : " (a slot)");
}

void udp_ibv_reader::impl::handle_error_completion(const ibv_wc& wc)
{
    // Any error moves the QP to ERR (IB spec); the rest of its WRs flush.
    qp_failed = true;
    if (wc.status == IBV_WC_WR_FLUSH_ERR)
        return;         // a slot returned unused
    frames_completed++; // a frame took the slot
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

void udp_ibv_reader::impl::recover_queue_pair()
{
    qp_failed = false;
    if (striding) {
        logger.warn("the multi-packet receive queue went to the error state; resetting "
                    "it and posting every WQE again (frames arriving meanwhile are "
                    "dropped and counted)");
        try {
            striding->reset();
        } catch (const std::exception& e) {
            throw std::runtime_error(
                std::string("the multi-packet receive queue went to the error state and "
                            "could not be reset: ") +
                e.what() +
                "; check the device with spead_ibv_check and make the source "
                "again");
        }
        return;
    }
    logger.warn("the receive queue pair went to the error state; resetting it and "
                "posting every slot again (frames arriving meanwhile are dropped and "
                "counted)");
    try {
        // RESET discards the outstanding WRs and their completions.
        ibv::modify_qp(qp.get(), IBV_QPS_RESET);
        ibv::modify_qp(qp.get(), IBV_QPS_INIT, device.port_num());
        post_all_slots();
        ibv::modify_qp(qp.get(), IBV_QPS_RTR);
    } catch (const std::exception& e) {
        throw std::runtime_error(
            std::string("the receive queue pair went to the error state and could not "
                        "be reset: ") +
            e.what() +
            "; check the device with spead_ibv_check and make the source again");
    }
}

void udp_ibv_reader::impl::drain_on_exit()
{
    // Frames already in the ring go to the stream (which counts them in
    // packets_after_stop if it has ended). Bounded: a sender that keeps going must not
    // keep the reader from stopping.
    const auto drain = [this] {
        for (int i = 0; i < max_exit_polls && striding; i++) {
            // -1: the stream has ended and counts what it is still handed.
            const int n = poll_striding_once();
            if (n >= 0 && n < poll_batch)
                return;
        }
        for (int i = 0; i < max_exit_polls && !striding; i++) {
            const int n = ibv_poll_cq(recv_cq.get(), poll_batch, completions.data());
            if (n <= 0)
                return;
            int reposts = 0;
            handle_completions(n, reposts);
            if (qp_failed) {
                recover_queue_pair();
            } else {
                ibv_recv_wr* bad = nullptr;
                if (ibv_post_recv(qp.get(), &wrs[repost_slots[0]], &bad) != 0)
                    return;
            }
            if (n < poll_batch)
                return;
        }
    };
    drain();
    if (drops_from == drop_source::flow_counters) {
        // Exact once a read of the counters is followed by the CQ drained and no frame
        // matched in between.
        for (int attempt = 0; attempt < max_exit_reconciliations; attempt++) {
            std::uint64_t before = 0, after = 0;
            if (!read_matched_frames(before))
                break;
            std::this_thread::sleep_for(completion_settle_time);
            drain();
            if (before >= frames_completed)
                publish_drops(before - frames_completed);
            if (!read_matched_frames(after) || after == before)
                break;
        }
    } else if (drops_from == drop_source::port_counter) {
        read_port_drops();
    }
}

// ---- NIC drop counting --------------------------------------------------------------

void udp_ibv_reader::impl::update_drop_count(bool cq_drained)
{
    if (drops_from == drop_source::none)
        return;
    const auto now = steady_clock::now();
    if (drops_from == drop_source::port_counter) {
        if (now - last_drop_read >= drop_count_interval) {
            last_drop_read = now;
            read_port_drops();
        }
        return;
    }
    if (!drop_read_pending) {
        if (now - last_drop_read < drop_count_interval)
            return;
        last_drop_read = now;
        drop_read_pending = read_matched_frames(pending_matched);
        pending_since = now;
        return;
    }
    // Every frame counted before the read has completed by the time the CQ is seen
    // empty a moment later; frames completed since then make this a lower bound, which
    // a later read catches up with.
    if (cq_drained && now - pending_since >= completion_settle_time) {
        drop_read_pending = false;
        if (pending_matched >= frames_completed)
            publish_drops(pending_matched - frames_completed);
    }
}

bool udp_ibv_reader::impl::read_matched_frames(std::uint64_t& matched)
{
    std::uint64_t sum = 0;
    for (const auto& counter : flow_counters) {
        std::uint64_t packets = 0;
        const int status = ibv::read_flow_packet_counter(counter.get(), packets);
        if (status != 0) {
            if (!warned_counter_read) {
                warned_counter_read = true;
                logger.warn("ibv_read_counters: {}; frames_dropped_no_buffer is not "
                            "updated",
                            std::strerror(status));
            }
            return false;
        }
        sum += packets;
    }
    matched = sum;
    return true;
}

void udp_ibv_reader::impl::read_port_drops()
{
    std::uint64_t raw = 0;
    if (ibv::read_counter_file(device.port_counter_path("out_of_buffer"), raw) != 0)
        return;
    // mlx5's queue counters are 32 bits wide: a smaller value has wrapped.
    if (raw >= port_drops_last_raw)
        port_drops += raw - port_drops_last_raw;
    else if (port_drops_last_raw <= 0xffffffffu)
        port_drops += (raw + (std::uint64_t(1) << 32)) - port_drops_last_raw;
    port_drops_last_raw = raw;
    publish_drops(port_drops);
}

void udp_ibv_reader::impl::publish_drops(std::uint64_t dropped)
{
    // Never backwards: an earlier read may have been the more complete one.
    auto& published =
        counts[static_cast<std::size_t>(recv_stat::frames_dropped_no_buffer)];
    if (dropped > published.load(std::memory_order_relaxed))
        published.store(dropped, std::memory_order_relaxed);
}

// ---- the public class ---------------------------------------------------------------

udp_ibv_reader::udp_ibv_reader(stream& owner, const udp_ibv_config& config)
    : reader(owner), d_impl(std::make_unique<impl>(*this, config))
{
}

udp_ibv_reader::~udp_ibv_reader() = default;

void udp_ibv_reader::run() { d_impl->run(); }

void udp_ibv_reader::wake()
{
    d_impl->stopping.store(true);
    const std::uint64_t one = 1;
    // An eventfd write of 1 cannot fail short of overflow; poll() sees it either way.
    [[maybe_unused]] auto written = ::write(d_impl->wake.get(), &one, sizeof(one));
}

recv_stats udp_ibv_reader::transport_stats() const
{
    recv_stats out;
    for (std::size_t i = 0; i < recv_stats::size; i++)
        out[static_cast<recv_stat>(i)] =
            d_impl->counts[i].load(std::memory_order_relaxed);
    // Which receive queue this reader chose, for anyone reading the stats.
    out[recv_stat::ibv_multi_packet_queues] = uses_multi_packet_receive_queue() ? 1 : 0;
    return out;
}

std::size_t udp_ibv_reader::get_buffer_size() const
{
    return d_impl->striding ? d_impl->striding->buffer_size()
                            : d_impl->slots * d_impl->slot_size;
}

bool udp_ibv_reader::uses_multi_packet_receive_queue() const
{
    return d_impl->striding != nullptr;
}

int udp_ibv_reader::get_comp_vector() const { return d_impl->comp_vector; }

} // namespace recv
} // namespace spead
} // namespace gr
