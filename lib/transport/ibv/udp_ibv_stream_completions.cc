/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::udp_ibv_stream's completions: taking them from the CQ, waiting (bounded) for
// the NIC to finish with slots, abandoning the queue when the NIC stalls, and
// resetting it to RTS after an error.

#include "udp_ibv_stream_impl.h"
#include <poll.h>
#include <sched.h>
#include <system_error>
#include <boost/asio/error.hpp>
#include <algorithm>
#include <thread>

namespace gr {
namespace spead {
namespace send {

namespace {

using steady = std::chrono::steady_clock;

boost::system::error_code error_for(ibv_wc_status status)
{
    namespace errc = boost::system::errc;
    switch (status) {
    case IBV_WC_LOC_LEN_ERR:
        return errc::make_error_code(errc::message_size);
    case IBV_WC_LOC_PROT_ERR:
        return errc::make_error_code(errc::bad_address);
    case IBV_WC_WR_FLUSH_ERR:
        return errc::make_error_code(errc::operation_canceled);
    default:
        return errc::make_error_code(errc::io_error);
    }
}

} // namespace

int udp_ibv_stream::impl::poll_completions()
{
    ibv_wc wc[poll_batch];
    const int n = ibv_poll_cq(cq.get(), poll_batch, wc);
    if (n < 0) {
        // Only a CQ overrun does this, and the CQ has room for every WR.
        if (!completion_error)
            completion_error =
                boost::system::errc::make_error_code(boost::system::errc::io_error);
        logger.error("ibv_poll_cq failed: the send completion queue is broken");
        qp_failed = true;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (wc[i].status != IBV_WC_SUCCESS) {
            error_completions++;
            qp_failed = true;
            if (!completion_error)
                completion_error = error_for(wc[i].status);
            if (int(wc[i].status) != last_logged_status) {
                last_logged_status = int(wc[i].status);
                logger.error("a send work request completed with {} (vendor error "
                             "0x{:x}); the heaps in flight fail and the send queue is "
                             "reset",
                             ibv_wc_status_str(wc[i].status),
                             wc[i].vendor_err);
            }
        }
        completed = std::max<std::uint64_t>(completed, wc[i].wr_id);
    }
    return n;
}

bool udp_ibv_stream::impl::wait_for_completions(std::uint64_t target,
                                                boost::system::error_code& ec)
{
    auto deadline = steady::now() + stall_limit;
    int empty_polls = 0;
    while (completed < target) {
        const int n = poll_completions();
        if (n < 0) {
            // The CQ is broken for good: nothing will complete, so do not wait for it.
            if (!ec)
                ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
            abandon_outstanding();
            return false;
        }
        if (n > 0) {
            empty_polls = 0;
            deadline = steady::now() + stall_limit; // progress
            continue;
        }
        if (++empty_polls < max_poll)
            continue;
        empty_polls = 0;
        if (steady::now() > deadline) {
            if (!ec)
                ec = boost::asio::error::timed_out;
            logger.error("the NIC completed no send for {} s: abandoning {} packet(s) "
                         "in flight (is the device still there?)",
                         stall_limit.count(),
                         posted - completed);
            abandon_outstanding();
            return false;
        }
        if (!channel) {
            sched_yield(); // busy polling, but let the NIC's other users run
            continue;
        }
        // Arm, then look once more: a completion between the last poll and the arming
        // raises no event.
        if (ibv_req_notify_cq(cq.get(), 0) != 0)
            continue;
        if (poll_completions() != 0)
            continue;
        pollfd pfd{ channel->fd, POLLIN, 0 };
        if (poll(&pfd, 1, channel_wait_ms) > 0) {
            ibv_cq* event_cq = nullptr;
            void* event_context = nullptr;
            while (ibv_get_cq_event(channel.get(), &event_cq, &event_context) == 0)
                ibv_ack_cq_events(event_cq, 1);
        }
    }
    return completed >= target;
}

void udp_ibv_stream::impl::abandon_outstanding()
{
    // ERR flushes every outstanding WR; give the flush a moment, then forget the rest
    // (RESET discards the queue, so the NIC touches none of that memory afterwards).
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE);
    const auto deadline = steady::now() + std::chrono::seconds(1);
    while (completed < posted && steady::now() < deadline) {
        if (poll_completions() <= 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    completed = posted;
    qp_failed = true;
    recover();
}

void udp_ibv_stream::impl::recover()
{
    if (completed < posted)
        return; // the NIC still owns slots: wait for their completions first
    try {
        ibv::modify_qp(qp.get(), IBV_QPS_RESET);
        ibv::modify_qp(qp.get(), IBV_QPS_INIT, binding->port_num());
        ibv::modify_qp(qp.get(), IBV_QPS_RTR);
        ibv::modify_qp(qp.get(), IBV_QPS_RTS);
        qp_failed = false;
        logger.warn("send queue reset to RTS after an error; sending continues");
    } catch (const std::system_error& e) {
        logger.error("could not reset the send queue: {}", e.what());
    }
}

void udp_ibv_stream::impl::take_device_events(bool now)
{
    const ibv::device_events e = events->take(qp.get(), cq.get(), now);
    if (!e.any())
        return;
    try {
        ibv::end_stream_if_unrecoverable(e, *binding, "send queue");
    } catch (const std::runtime_error& error) {
        device_dead = true;
        failure(error.what()); // logged once and counted by the stream
        return;
    }
    ibv::log_port_changes(e, *binding, logger, "sending");
    if (e.port_errors > 0 || e.port_actives > 0) {
        if (e.port_down && !port_down)
            port_down_since = steady::now();
        port_down = e.port_down;
    }
    if (e.qp_fatal)
        qp_failed = true; // reset once its WRs have flushed
}

bool udp_ibv_stream::impl::device_usable(boost::system::error_code& ec)
{
    namespace errc = boost::system::errc;
    take_device_events(false);
    // A port that went down: wait (bounded) for it to come back rather than post
    // frames that are lost on the wire.
    while (port_down && !device_dead) {
        const auto left = port_down_since + port_down_limit - steady::now();
        if (left <= steady::duration::zero()) {
            ec = errc::make_error_code(errc::network_down);
            return false;
        }
        pollfd pfd{ events->fd(), POLLIN, 0 };
        const auto wait_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1;
        poll(&pfd, 1, int(std::min<long long>(wait_ms, 100)));
        take_device_events(true);
        if (port_down && steady::now() >= port_down_since + port_down_limit)
            logger.error("port {} of {} has been down for {} s: heaps fail until it is "
                         "up (check the cable, the switch port, and `ip link`)",
                         int(binding->port_num()),
                         binding->device_name(),
                         port_down_limit.count());
    }
    if (device_dead) {
        ec = errc::make_error_code(errc::io_error);
        return false;
    }
    return true;
}

std::uint64_t udp_ibv_stream::impl::reap_completions(bool wait,
                                                     boost::system::error_code& ec,
                                                     std::uint64_t /*written*/)
{
    impl& d = *this;
    if (wait)
        d.wait_for_completions(d.posted, ec);
    else
        d.poll_completions();
    if (d.completion_error) {
        if (!ec)
            ec = d.completion_error;
        d.completion_error.clear();
    }
    if (d.error_completions > d.error_completions_counted) {
        count(send_stat::packets_failed,
              d.error_completions - d.error_completions_counted);
        d.error_completions_counted = d.error_completions;
    }
    if (d.qp_failed && d.completed == d.posted)
        d.recover();
    return d.completed;
}

} // namespace send
} // namespace spead
} // namespace gr
