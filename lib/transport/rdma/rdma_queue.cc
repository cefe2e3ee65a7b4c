/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// One rdma connection's verbs objects (rdma::queue), the event channel, and the
// device checks every rdma endpoint makes at construction.

#include "rdma_link.h"
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <cerrno>
#include <stdexcept>

namespace gr {
namespace spead {
namespace rdma {

namespace {
void set_nonblocking(int fd)
{
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        ibv::throw_error("fcntl(O_NONBLOCK)", errno);
}

std::uint32_t port_max_message(ibv_context* context, std::uint8_t port)
{
    ibv_port_attr attr{};
    const int status = ibv_query_port(context, port, &attr);
    if (status != 0)
        ibv::throw_error("ibv_query_port", status);
    return attr.max_msg_sz;
}
} // namespace

int wc_errno(ibv_wc_status status)
{
    switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
        return ETIMEDOUT;
    case IBV_WC_LOC_LEN_ERR:
        return EMSGSIZE;
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
        return EPROTO;
    default:
        return ECONNRESET;
    }
}

rdma_conn_param conn_param(const void* data, std::size_t size)
{
    // RC retries bound dead-peer detection to a second or two (rdma_cm's ack
    // timeout); receivers keep their credits, so an RNR is a broken peer: no retry.
    rdma_conn_param param{};
    param.private_data = data;
    param.private_data_len = std::uint8_t(size);
    param.responder_resources = 1;
    param.initiator_depth = 1;
    param.retry_count = 7;
    param.rnr_retry_count = 0;
    return param;
}

event_channel_ptr create_event_channel()
{
    errno = 0;
    rdma_event_channel* c = rdma_create_event_channel();
    if (!c)
        ibv::throw_error("rdma_create_event_channel",
                         errno ? errno : ENODEV,
                         "is librdmacm installed, and is there a verbs device "
                         "(spead_ibv_check)?");
    event_channel_ptr channel(c);
    set_nonblocking(c->fd);
    return channel;
}

std::uint32_t device_max_message(const boost::asio::ip::address_v4& address,
                                 const std::string& parameter,
                                 const std::string& shown)
{
    const std::string fix =
        ": use an interface of an RDMA (RoCE or InfiniBand) device (rdma link show, "
        "spead_ibv_check), or transport tcp";
    if (address.is_unspecified()) {
        int n = 0;
        ibv_device** list = ibv_get_device_list(&n);
        if (!list || n == 0) {
            if (list)
                ibv_free_device_list(list);
            throw std::invalid_argument(parameter +
                                        ": none given, and this host has no verbs "
                                        "device" +
                                        fix);
        }
        ibv_context* context = ibv_open_device(list[0]);
        ibv_free_device_list(list);
        if (!context)
            ibv::throw_error("ibv_open_device", errno ? errno : ENODEV);
        const std::uint32_t max = port_max_message(context, 1);
        ibv_close_device(context);
        return max;
    }
    rdma_cm_id* raw = nullptr;
    if (rdma_create_id(nullptr, &raw, nullptr, RDMA_PS_TCP) != 0)
        ibv::throw_error("rdma_create_id", errno ? errno : ENODEV);
    ibv::cm_id_ptr id(raw);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(address.to_uint());
    if (rdma_bind_addr(raw, reinterpret_cast<sockaddr*>(&sin)) != 0 || !raw->verbs)
        throw std::invalid_argument(parameter + ": '" + shown + "' (" +
                                    address.to_string() + ") has no verbs device" + fix);
    return port_max_message(raw->verbs, raw->port_num);
}

void check_max_packet_size(std::size_t max_packet_size, std::uint32_t device_max)
{
    if (max_packet_size > device_max)
        throw std::invalid_argument(
            "max_packet_size: " + std::to_string(max_packet_size) +
            " bytes is above the device's max message size (" +
            std::to_string(device_max) + "); use at most " + std::to_string(device_max));
}

queue::queue(event_channel_ptr channel,
             ibv::cm_id_ptr id,
             std::uint32_t send_wr,
             std::uint32_t recv_wr,
             std::uint32_t inline_bytes)
    : d_channel(std::move(channel)), d_id(std::move(id))
{
    ibv_context* context = d_id->verbs;
    d_comp = ibv::create_comp_channel(context);
    set_nonblocking(d_comp->fd);
    d_cq = ibv::create_cq(context, int(send_wr + recv_wr), d_comp.get(), 0);
    d_pd = ibv::alloc_pd(context);
    ibv_qp_init_attr attr{};
    attr.send_cq = d_cq.get();
    attr.recv_cq = d_cq.get();
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = send_wr;
    attr.cap.max_recv_wr = recv_wr;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    attr.cap.max_inline_data = inline_bytes;
    if (rdma_create_qp(d_id.get(), d_pd.get(), &attr) != 0)
        ibv::throw_error("rdma_create_qp(RC, " + std::to_string(send_wr) + " sends, " +
                             std::to_string(recv_wr) + " receives)",
                         errno ? errno : ENOMEM,
                         "lower recv_depth, rdma_depth or send_depth (spead_ibv_check "
                         "shows the device's limits)");
    d_qp.id = d_id.get();
    d_inline = attr.cap.max_inline_data; // what the device granted
    if (ibv_req_notify_cq(d_cq.get(), 0) != 0)
        ibv::throw_error("ibv_req_notify_cq", errno ? errno : EINVAL);
    d_timer =
        file_descriptor(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
    d_epoll = file_descriptor(epoll_create1(EPOLL_CLOEXEC));
    if (!d_timer || !d_epoll)
        ibv::throw_error("timerfd/epoll", errno);
    for (int fd : { d_channel->fd, d_comp->fd, d_timer.get() }) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        if (epoll_ctl(d_epoll.get(), EPOLL_CTL_ADD, fd, &ev) != 0)
            ibv::throw_error("epoll_ctl", errno);
    }
}

// Members go in reverse order of declaration: the QP, then the PD, CQ and channel it
// used, then the id and its event channel.
queue::~queue() = default;

int queue::poll(ibv_wc* wc, int n)
{
    // Re-arm first, then poll: a completion between the two is not missed.
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    unsigned events = 0;
    while (ibv_get_cq_event(d_comp.get(), &cq, &context) == 0)
        events++;
    if (events) {
        ibv_ack_cq_events(d_cq.get(), events);
        ibv_req_notify_cq(d_cq.get(), 0);
    }
    const int got = ibv_poll_cq(d_cq.get(), n, wc);
    return got < 0 ? -EIO : got;
}

bool queue::peer_gone()
{
    rdma_cm_event* event = nullptr;
    while (rdma_get_cm_event(d_channel.get(), &event) == 0) {
        switch (event->event) {
        case RDMA_CM_EVENT_DISCONNECTED:
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
        case RDMA_CM_EVENT_TIMEWAIT_EXIT:
        case RDMA_CM_EVENT_CONNECT_ERROR:
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_REJECTED:
            d_gone = true;
            break;
        default:
            break;
        }
        rdma_ack_cm_event(event);
    }
    return d_gone;
}

bool queue::wait_peer_gone(std::chrono::milliseconds timeout)
{
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (!peer_gone()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return false;
        pollfd pfd{ d_channel->fd, POLLIN, 0 };
        ::poll(&pfd, 1, int(left.count()));
    }
    return true;
}

void queue::start_timer(std::chrono::milliseconds period)
{
    itimerspec spec{};
    spec.it_interval.tv_sec = period.count() / 1000;
    spec.it_interval.tv_nsec = (period.count() % 1000) * 1000000;
    spec.it_value = spec.it_interval;
    timerfd_settime(d_timer.get(), 0, &spec, nullptr);
}

bool queue::timer_fired()
{
    std::uint64_t expirations = 0;
    return ::read(d_timer.get(), &expirations, sizeof(expirations)) > 0;
}

} // namespace rdma
} // namespace spead
} // namespace gr
