/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "rc_requester.h"

#include "device.h"
#include "device_context.h"
#include "log.h"
#include "memory_region.h"
#include "rc_queue_pair.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace spead_emu {
namespace {

// Requests in flight per QP: bounds the acknowledgements that can queue up unread.
constexpr uint64_t max_in_flight = 256;

rc_wire::kind request_kind(ibv_wr_opcode opcode)
{
    switch (opcode) {
    case IBV_WR_SEND_WITH_IMM:
        return rc_wire::kind::send_with_imm;
    case IBV_WR_RDMA_WRITE:
        return rc_wire::kind::write;
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        return rc_wire::kind::write_with_imm;
    case IBV_WR_RDMA_READ:
        return rc_wire::kind::read;
    default:
        return rc_wire::kind::send;
    }
}

rc_wire::clock::time_point later(rc_wire::clock::time_point when,
                                 rc_wire::clock::duration delay)
{
    return delay == rc_wire::clock::duration::max() ? rc_wire::clock::time_point::max()
                                                    : when + delay;
}

} // namespace

rc_requester::rc_requester(rc_queue_pair& qp)
    : m_qp(qp), m_doorbell(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
{
    m_payload_sges.reserve(device_limits::max_sge);
}

rc_requester::~rc_requester() = default;

void rc_requester::start()
{
    m_thread = std::thread([this] { run(); });
}

void rc_requester::stop()
{
    m_stopping = true;
    ring_doorbell();
    if (m_thread.joinable())
        m_thread.join();
}

void rc_requester::ring_doorbell()
{
    const uint64_t one = 1;
    (void)!write(m_doorbell.get(), &one, sizeof(one));
}

void rc_requester::run()
{
    while (!m_stopping)
        wait(step());
}

void rc_requester::wait(clock::time_point deadline)
{
    pollfd fds[2] = { { m_doorbell.get(), POLLIN, 0 }, { -1, 0, 0 } };
    if (m_connection) {
        fds[1].fd = m_connection.get();
        fds[1].events = POLLIN;
        if (m_connecting || output_pending())
            fds[1].events |= POLLOUT;
    }
    const auto left = deadline - clock::now();
    const int timeout = static_cast<int>(std::clamp<long long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1, 0, 100));
    if (poll(fds, 2, timeout) <= 0)
        return;
    if (fds[0].revents & POLLIN) {
        uint64_t count;
        (void)!read(m_doorbell.get(), &count, sizeof(count));
    }
    if (fds[1].revents == 0)
        return;
    if (m_connecting) {
        connection_ready(clock::now());
        return;
    }
    if (fds[1].revents & (POLLIN | POLLERR | POLLHUP))
        read_responses();
    if (m_connection && (fds[1].revents & POLLOUT))
        write_output();
}

rc_requester::clock::time_point rc_requester::step()
{
    std::lock_guard<std::mutex> lock(m_qp.m_mutex);
    const clock::time_point now = clock::now();
    if (m_generation != m_qp.m_generation) {
        m_generation = m_qp.m_generation; // a reset: the wire starts afresh
        drop_connection();
        m_connection_lost = false;
        m_retries = m_rnr_retries = 0;
        m_rewind_pending = false;
        m_pause_until = {};
    }
    if (m_qp.m_state == IBV_QPS_ERR) {
        drop_connection(); // an errored QP sends nothing more
        m_qp.flush_locked();
        return clock::time_point::max();
    }
    if (m_qp.m_state != IBV_QPS_RTS)
        return clock::time_point::max();
    const bool outstanding = m_qp.m_send_acknowledged < m_qp.m_send.posted;
    if (!outstanding) {
        m_retries = m_rnr_retries = 0;
        return clock::time_point::max();
    }
    const auto timeout = rc_wire::ack_timeout(m_qp.m_attr.timeout);
    if (m_connection_lost) {
        m_connection_lost = false;
        retry_locked(now, "the connection to the peer broke");
        if (m_qp.m_state == IBV_QPS_ERR)
            return now;
    }
    if (!m_connection) {
        if (now < m_next_connect)
            return m_next_connect;
        connect_locked(now);
        return m_qp.m_state == IBV_QPS_ERR ? now : later(now, timeout);
    }
    if (m_connecting) {
        const auto deadline = later(m_connect_started, timeout);
        if (now >= deadline) {
            drop_connection();
            retry_locked(now, "connecting to the peer timed out");
            return now;
        }
        return deadline;
    }
    if (now < m_pause_until)
        return m_pause_until; // an RNR NAK's wait
    const bool busy = output_pending() || m_qp.m_send_acknowledged < m_qp.m_send.taken;
    if (busy && now - m_last_progress >= timeout) {
        if (path_delivers()) {
            // The peer's host holds every byte: its process is only slow (a NIC would
            // have answered). A probe makes a path that broke since show as undelivered
            // bytes at the next expiry.
            m_last_progress = now;
            if (!output_pending())
                queue_probe();
            return later(now, timeout);
        }
        retry_locked(now, "no acknowledgement within the QP's timeout");
        if (m_qp.m_state == IBV_QPS_ERR)
            return now;
    }
    if (!output_pending())
        prepare_next_message_locked(now);
    return later(m_last_progress, timeout);
}

void rc_requester::connect_locked(clock::time_point now)
{
    const uint16_t port = rc_wire::port_of_qp_num(m_qp.m_attr.dest_qp_num);
    const int fd = rc_wire::start_connect(m_qp.m_peer_address, port);
    m_connect_started = now;
    if (fd < 0) {
        const auto timeout = rc_wire::ack_timeout(m_qp.m_attr.timeout);
        retry_locked(now, "the peer cannot be reached");
        m_next_connect =
            later(now, std::min<clock::duration>(timeout, std::chrono::seconds(1)));
        return;
    }
    m_connection.reset(fd);
    m_connecting = true;
}

void rc_requester::connection_ready(clock::time_point now)
{
    int error = 0;
    socklen_t length = sizeof(error);
    getsockopt(m_connection.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    std::lock_guard<std::mutex> lock(m_qp.m_mutex);
    if (error != 0) {
        // Refused (no such QP there, or its process is gone) or unreachable: what a
        // requester sees as silence, so it waits out its timeout before the next try.
        trace("RC QP 0x%x: connecting to %s port %u: %s",
              m_qp.m_shell.verbs.qp_num,
              inet_ntoa(m_qp.m_peer_address),
              rc_wire::port_of_qp_num(m_qp.m_attr.dest_qp_num),
              strerror(error));
        drop_connection();
        const auto timeout = rc_wire::ack_timeout(m_qp.m_attr.timeout);
        m_next_connect =
            later(m_connect_started,
                  std::min<clock::duration>(timeout, std::chrono::seconds(1)));
        retry_locked(now, "the peer refused or could not be reached");
        return;
    }
    m_connecting = false;
    // Everything unacknowledged goes again; the responder acknowledges duplicates
    // without executing them twice.
    m_qp.m_send.taken = m_qp.m_send_acknowledged;
    m_rewind_pending = false;
    m_last_progress = now;
    rc_wire::header hello{};
    hello.magic = rc_wire::header_magic;
    hello.type = rc_wire::kind::hello;
    hello.source_qpn = m_qp.m_shell.verbs.qp_num;
    hello.detail = m_qp.m_attr.dest_qp_num;
    set_output_size(sizeof(hello));
    memcpy(m_output.data(), &hello, sizeof(hello));
}

void rc_requester::prepare_next_message_locked(clock::time_point now)
{
    rc_queue_pair& qp = m_qp;
    if (m_rewind_pending) {
        qp.m_send.taken = m_rewind_to;
        m_rewind_pending = false;
        m_last_progress = now;
    }
    if (qp.m_send.taken == qp.m_send.posted ||
        qp.m_send.taken - qp.m_send_acknowledged >= max_in_flight)
        return;
    const rc_send_slot& slot = qp.m_send.at(qp.m_send.taken);
    size_t total = slot.inline_data.size();
    if (!slot.is_inline) {
        total = 0;
        for (const ibv_sge& sge : slot.sges)
            total += sge.length;
    }
    const bool in_flight = qp.m_send_acknowledged < qp.m_send.taken;
    const bool is_read = slot.opcode == IBV_WR_RDMA_READ;
    ibv_wc_status status = IBV_WC_LOC_LEN_ERR;
    if (total <= device_limits::max_message_size) {
        status = IBV_WC_SUCCESS;
        if (is_read) {
            // A read's request carries no payload: its SGEs receive the response.
            set_output_size(sizeof(rc_wire::header));
        } else if (slot.is_inline) {
            set_output_size(sizeof(rc_wire::header) + total);
            memcpy(m_output.data() + sizeof(rc_wire::header),
                   slot.inline_data.data(),
                   total);
        } else {
            // The payload goes from registered memory to the socket at transmit time
            // (write_output); here its SGEs are only checked.
            status =
                qp.context().memory_regions().with_ranges(qp.m_pd,
                                                          slot.sges.data(),
                                                          slot.sges.size(),
                                                          false,
                                                          [](const iovec*, size_t) {});
            set_output_size(sizeof(rc_wire::header));
            m_payload_sges.assign(slot.sges.begin(), slot.sges.end());
            m_payload_total = total;
        }
    }
    if (status != IBV_WC_SUCCESS) {
        set_output_size(0);
        // A local error completes in order: once what went before is acknowledged.
        if (!in_flight)
            fail_oldest_locked(status,
                               status == IBV_WC_LOC_LEN_ERR
                                   ? "a send WR is longer than the port's max_msg_sz"
                                   : "a send WR named memory that is not registered "
                                     "to its PD");
        return;
    }
    rc_wire::header request{};
    request.magic = rc_wire::header_magic;
    request.type = request_kind(slot.opcode);
    request.psn = slot.psn;
    request.length = is_read ? 0 : static_cast<uint32_t>(total);
    request.detail = is_read ? static_cast<uint32_t>(total) : 0;
    request.remote_addr = slot.remote_addr;
    request.rkey = slot.rkey;
    request.imm = slot.imm;
    request.source_qpn = qp.m_shell.verbs.qp_num;
    memcpy(m_output.data(), &request, sizeof(request));
    if (!in_flight)
        m_last_progress = now;
    qp.m_send.taken++;
}

void rc_requester::write_output()
{
    while (output_pending()) {
        ssize_t put = 0;
        int error = 0;
        if (m_output_done < m_output_size) {
            put = send(m_connection.get(),
                       m_output.data() + m_output_done,
                       m_output_size - m_output_done,
                       MSG_DONTWAIT | MSG_NOSIGNAL | (m_payload_total ? MSG_MORE : 0));
            error = errno;
            if (put > 0)
                m_output_done += static_cast<size_t>(put);
        } else {
            const ibv_wc_status status = m_qp.context().memory_regions().with_ranges(
                m_qp.m_pd,
                m_payload_sges.data(),
                m_payload_sges.size(),
                false,
                [&](const iovec* ranges, size_t count) {
                    put = send_ranges(ranges, count);
                    error = errno;
                });
            if (status != IBV_WC_SUCCESS) {
                put = -1; // deregistered while on the wire: the message cannot finish
                error = EFAULT;
            } else if (put > 0) {
                m_payload_done += static_cast<size_t>(put);
            }
        }
        if (put > 0) {
            m_last_progress = clock::now();
        } else if (put < 0 && (error == EAGAIN || error == EWOULDBLOCK)) {
            return;
        } else if (put < 0 && error == EINTR) {
            continue;
        } else {
            std::lock_guard<std::mutex> lock(m_qp.m_mutex);
            drop_connection();
            m_connection_lost = true;
            return;
        }
    }
    set_output_size(0);
}

ssize_t rc_requester::send_ranges(const iovec* ranges, size_t count)
{
    iovec rest[device_limits::max_sge];
    size_t used = 0;
    size_t skip = m_payload_done;
    for (size_t i = 0; i < count; i++) {
        if (skip >= ranges[i].iov_len) {
            skip -= ranges[i].iov_len;
            continue;
        }
        rest[used++] = { static_cast<uint8_t*>(ranges[i].iov_base) + skip,
                         ranges[i].iov_len - skip };
        skip = 0;
    }
    msghdr message{};
    message.msg_iov = rest;
    message.msg_iovlen = used;
    return sendmsg(m_connection.get(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void rc_requester::read_responses()
{
    // Read responses carry their bytes: read in large pieces.
    constexpr size_t piece = 64 * 1024;
    const size_t before = m_input.size();
    m_input.resize(before + piece);
    const ssize_t got =
        recv(m_connection.get(), m_input.data() + before, piece, MSG_DONTWAIT);
    m_input.resize(before + static_cast<size_t>(std::max<ssize_t>(got, 0)));
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    std::lock_guard<std::mutex> lock(m_qp.m_mutex);
    if (got <= 0) {
        drop_connection(); // the peer closed (its process may be gone) or the link broke
        m_connection_lost = true;
        return;
    }
    size_t used = 0;
    while (m_input.size() - used >= sizeof(rc_wire::header)) {
        rc_wire::header response;
        memcpy(&response, m_input.data() + used, sizeof(response));
        if (response.magic != rc_wire::header_magic ||
            response.length > device_limits::max_message_size) {
            warn("RC QP 0x%x: garbled response on the RC wire; connection dropped",
                 m_qp.m_shell.verbs.qp_num);
            drop_connection();
            m_connection_lost = true;
            return;
        }
        if (m_input.size() - used < sizeof(response) + response.length)
            break; // the rest of a read response is still on its way
        const uint8_t* payload = m_input.data() + used + sizeof(response);
        used += sizeof(response) + response.length;
        if (m_qp.m_state == IBV_QPS_RTS)
            handle_response_locked(response, payload);
        if (!m_connection)
            return;
    }
    m_input.erase(m_input.begin(), m_input.begin() + used);
}

void rc_requester::handle_response_locked(const rc_wire::header& response,
                                          const uint8_t* payload)
{
    rc_queue_pair& qp = m_qp;
    uint64_t index = qp.m_send_acknowledged;
    while (index < qp.m_send.taken && qp.m_send.at(index).psn != response.psn)
        index++;
    if (index == qp.m_send.taken)
        return; // about a WR already completed (a duplicate's acknowledgement)
    const clock::time_point now = clock::now();
    m_last_progress = now;
    switch (response.type) {
    case rc_wire::kind::ack:
        acknowledge_through_locked(index + 1);
        m_retries = m_rnr_retries = 0;
        return;
    case rc_wire::kind::read_response: {
        acknowledge_through_locked(index);
        const rc_send_slot& slot = qp.m_send.at(index);
        const ibv_wc_status status = qp.context().memory_regions().scatter(
            qp.m_pd, slot.sges.data(), slot.sges.size(), payload, response.length);
        if (status != IBV_WC_SUCCESS) {
            fail_oldest_locked(status,
                               "an RDMA read's SGEs could not take the bytes read "
                               "(unregistered, without LOCAL_WRITE, or too short)");
            return;
        }
        acknowledge_through_locked(index + 1);
        m_retries = m_rnr_retries = 0;
        return;
    }
    case rc_wire::kind::nak_rnr:
        acknowledge_through_locked(index);
        if (qp.m_attr.rnr_retry != 7 && ++m_rnr_retries > qp.m_attr.rnr_retry) {
            fail_oldest_locked(IBV_WC_RNR_RETRY_EXC_ERR,
                               "the peer had no receive posted, rnr_retry times");
            return;
        }
        // Go back to the refused request once the responder's RNR timer has run.
        m_rewind_pending = true;
        m_rewind_to = index;
        m_pause_until = now + rc_wire::rnr_delay(static_cast<uint8_t>(response.detail));
        m_last_progress = m_pause_until;
        return;
    case rc_wire::kind::nak_access:
        acknowledge_through_locked(index);
        fail_oldest_locked(IBV_WC_REM_ACCESS_ERR,
                           "the peer refused an RDMA write (rkey, bounds or access)");
        return;
    case rc_wire::kind::nak_invalid:
        acknowledge_through_locked(index);
        fail_oldest_locked(IBV_WC_REM_INV_REQ_ERR,
                           "the message did not fit the peer's receive WR");
        return;
    default:
        acknowledge_through_locked(index);
        fail_oldest_locked(IBV_WC_REM_OP_ERR, "the peer could not execute a request");
        return;
    }
}

void rc_requester::acknowledge_through_locked(uint64_t index)
{
    rc_queue_pair& qp = m_qp;
    while (qp.m_send_acknowledged < index) {
        const uint64_t done = qp.m_send_acknowledged++;
        const rc_send_slot& slot = qp.m_send.at(done);
        if (slot.signalled)
            qp.complete_send_locked(slot, done, IBV_WC_SUCCESS);
    }
}

void rc_requester::fail_oldest_locked(ibv_wc_status status, const char* reason)
{
    rc_queue_pair& qp = m_qp;
    const uint64_t index = qp.m_send_acknowledged++;
    if (qp.m_send.taken < qp.m_send_acknowledged)
        qp.m_send.taken = qp.m_send_acknowledged;
    qp.complete_send_locked(qp.m_send.at(index), index, status);
    warn("RC QP 0x%x: %s: wr_id %llu completed with %s; the QP is in ERR",
         qp.m_shell.verbs.qp_num,
         reason,
         static_cast<unsigned long long>(qp.m_send.at(index).wr_id),
         ibv_wc_status_str(status));
    qp.enter_error_locked(reason, IBV_EVENT_QP_FATAL, false);
}

void rc_requester::retry_locked(clock::time_point now, const char* reason)
{
    m_last_progress = now;
    if (++m_retries > m_qp.m_attr.retry_cnt) {
        fail_oldest_locked(IBV_WC_RETRY_EXC_ERR, reason);
        return;
    }
    trace("RC QP 0x%x: %s; retry %u of %u",
          m_qp.m_shell.verbs.qp_num,
          reason,
          m_retries,
          static_cast<unsigned>(m_qp.m_attr.retry_cnt));
}

bool rc_requester::path_delivers() const
{
    tcp_info info{};
    socklen_t length = sizeof(info);
    if (getsockopt(m_connection.get(), IPPROTO_TCP, TCP_INFO, &info, &length) != 0)
        return false;
    return info.tcpi_state == TCP_ESTABLISHED && info.tcpi_unacked == 0 &&
           info.tcpi_retransmits == 0 && info.tcpi_probes == 0;
}

void rc_requester::queue_probe()
{
    rc_wire::header probe{};
    probe.magic = rc_wire::header_magic;
    probe.type = rc_wire::kind::probe;
    probe.source_qpn = m_qp.m_shell.verbs.qp_num;
    set_output_size(sizeof(probe));
    memcpy(m_output.data(), &probe, sizeof(probe));
}

void rc_requester::set_output_size(size_t size)
{
    if (m_output.size() < size)
        m_output.resize(size); // grows only: a message is not cleared before its copy
    m_output_size = size;
    m_output_done = 0;
    m_payload_total = 0;
    m_payload_done = 0;
}

void rc_requester::drop_connection()
{
    m_connection.reset();
    m_connecting = false;
    set_output_size(0);
    m_input.clear();
}

} // namespace spead_emu
