/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "rc_responder.h"

#include "device.h"
#include "device_context.h"
#include "log.h"
#include "memory_region.h"
#include "rc_queue_pair.h"

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

bool ready_to_respond(ibv_qp_state state)
{
    return state == IBV_QPS_RTR || state == IBV_QPS_RTS || state == IBV_QPS_ERR;
}

} // namespace

rc_responder::rc_responder(rc_queue_pair& qp, int listening_fd)
    : m_qp(qp),
      m_listening(listening_fd),
      m_doorbell(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      m_stop(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
{
    m_in_place_sges.reserve(device_limits::max_sge);
}

rc_responder::~rc_responder() = default;

void rc_responder::start()
{
    m_thread = std::thread([this] { run(); });
}

void rc_responder::stop()
{
    m_stopping = true;
    const uint64_t one = 1;
    (void)!write(m_stop.get(), &one, sizeof(one));
    if (m_thread.joinable())
        m_thread.join();
}

void rc_responder::ring_doorbell()
{
    const uint64_t one = 1;
    (void)!write(m_doorbell.get(), &one, sizeof(one));
}

void rc_responder::run()
{
    while (!m_stopping) {
        bool serve = false;
        {
            std::lock_guard<std::mutex> lock(m_qp.m_mutex);
            // Before RTR a QP does not respond: requests wait in the connection (on
            // hardware they would be dropped and retransmitted).
            serve = m_connection && ready_to_respond(m_qp.m_state);
        }
        pollfd fds[4] = { { m_stop.get(), POLLIN, 0 },
                          { m_doorbell.get(), POLLIN, 0 },
                          { m_listening.get(), POLLIN, 0 },
                          { serve ? m_connection.get() : -1, POLLIN, 0 } };
        if (poll(fds, 4, -1) <= 0)
            continue;
        if (fds[0].revents)
            return;
        if (fds[1].revents) {
            uint64_t count;
            (void)!read(m_doorbell.get(), &count, sizeof(count));
        }
        if (fds[2].revents)
            accept_connection();
        else if (fds[3].revents && !serve_request()) {
            m_connection.reset();
            m_in_rnr = false;
        }
    }
}

void rc_responder::accept_connection()
{
    unique_fd accepted(accept4(m_listening.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!accepted)
        return;
    const int one = 1;
    setsockopt(accepted.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    rc_wire::header hello{};
    const auto deadline = rc_wire::clock::now() + std::chrono::seconds(2);
    if (!rc_wire::read_all(
            accepted.get(), &hello, sizeof(hello), m_stop.get(), deadline) ||
        hello.magic != rc_wire::header_magic || hello.type != rc_wire::kind::hello ||
        hello.detail != m_qp.m_shell.verbs.qp_num)
        return; // not an RC requester for this QP
    // A requester reconnects after a broken connection: the new one replaces it.
    m_connection = std::move(accepted);
    m_connection_source = hello.source_qpn;
    m_in_rnr = false;
}

bool rc_responder::serve_request()
{
    rc_wire::header request{};
    const auto forever = rc_wire::clock::time_point::max();
    const int fd = m_connection.get();
    if (!rc_wire::read_all(fd, &request, sizeof(request), m_stop.get(), forever) ||
        request.magic != rc_wire::header_magic ||
        request.length > device_limits::max_message_size)
        return false;
    // A write or send that will be executed goes from the socket straight into its
    // target memory or receive buffers, as the NIC's DMA would put it.
    bool direct = false;
    {
        std::lock_guard<std::mutex> lock(m_qp.m_mutex);
        direct = in_place_allowed_locked(request);
    }
    if (direct && !receive_in_place(request))
        return false;
    m_payload_in_place = direct;
    if (!m_payload_in_place) {
        if (m_payload.size() < request.length)
            m_payload.resize(request.length);
        if (!rc_wire::read_all(
                fd, m_payload.data(), request.length, m_stop.get(), forever))
            return false;
    }
    rc_wire::header response{};
    m_response_length = 0;
    {
        std::lock_guard<std::mutex> lock(m_qp.m_mutex);
        if (m_connection_source != m_qp.m_attr.dest_qp_num)
            return false; // a requester this QP is not connected to
        if (m_qp.m_state == IBV_QPS_ERR)
            return false; // an errored QP answers nothing: its requester loses the
                          // connection, retries and gives up
        response.type = execute_locked(request);
        if (response.type == rc_wire::kind::hello)
            return true; // discarded without a response
        response.detail = m_qp.m_attr.min_rnr_timer;
    }
    response.magic = rc_wire::header_magic;
    response.psn = request.psn;
    response.length = m_response_length;
    response.source_qpn = m_qp.m_shell.verbs.qp_num;
    const auto deadline = rc_wire::clock::now() + std::chrono::seconds(10);
    return rc_wire::write_all(fd, &response, sizeof(response), m_stop.get(), deadline) &&
           rc_wire::write_all(
               fd, m_payload.data(), m_response_length, m_stop.get(), deadline);
}

// The response to \p request; kind::hello means none (a request discarded).
rc_wire::kind rc_responder::execute_locked(const rc_wire::header& request)
{
    rc_queue_pair& qp = m_qp;
    if (request.type == rc_wire::kind::probe)
        return rc_wire::kind::hello; // nothing to do or answer
    const uint32_t expected = qp.m_expected_receive_psn;
    // A duplicate is acknowledged, not executed again; but a read is answered again
    // (reading twice changes nothing).
    if (rc_wire::psn_before(request.psn, expected))
        return request.type == rc_wire::kind::read ? remote_access_locked(request, false)
                                                   : rc_wire::kind::ack;
    if (request.psn != expected)
        return rc_wire::kind::hello; // after an RNR NAK, until the refused one returns
    m_in_rnr = false;
    rc_wire::kind result = rc_wire::kind::ack;
    switch (request.type) {
    case rc_wire::kind::send:
    case rc_wire::kind::send_with_imm:
        result = receive_locked(request, false);
        break;
    case rc_wire::kind::write:
        result = remote_access_locked(request, true);
        break;
    case rc_wire::kind::read:
        result = remote_access_locked(request, false);
        break;
    case rc_wire::kind::write_with_imm:
        // The receive is checked first: without one the write is refused whole.
        if (qp.m_receive.taken == qp.m_receive.posted) {
            result = rc_wire::kind::nak_rnr;
            break;
        }
        result = remote_access_locked(request, true);
        if (result == rc_wire::kind::ack)
            result = receive_locked(request, true);
        break;
    default:
        result = rc_wire::kind::nak_operational;
        break;
    }
    if (result == rc_wire::kind::nak_rnr) {
        m_in_rnr = true;
        trace("RC QP 0x%x: no receive posted for PSN 0x%x: RNR NAK",
              qp.m_shell.verbs.qp_num,
              request.psn);
        return result;
    }
    qp.m_expected_receive_psn = rc_wire::next_psn(expected);
    return result;
}

bool rc_responder::in_place_allowed_locked(const rc_wire::header& request)
{
    rc_queue_pair& qp = m_qp;
    const bool is_write = request.type == rc_wire::kind::write ||
                          request.type == rc_wire::kind::write_with_imm;
    const bool is_send = request.type == rc_wire::kind::send ||
                         request.type == rc_wire::kind::send_with_imm;
    const bool consumes_receive = request.type != rc_wire::kind::write;
    if ((!is_write && !is_send) || request.length == 0 ||
        (qp.m_state != IBV_QPS_RTR && qp.m_state != IBV_QPS_RTS) ||
        m_connection_source != qp.m_attr.dest_qp_num ||
        request.psn != qp.m_expected_receive_psn ||
        (consumes_receive && qp.m_receive.taken == qp.m_receive.posted))
        return false;
    const memory_region_table& memory = qp.context().memory_regions();
    if (is_write)
        return (qp.m_attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) &&
               memory.with_remote_target(qp.m_pd,
                                         request.rkey,
                                         request.remote_addr,
                                         request.length,
                                         [](uint8_t*) {});
    const receive_slot& slot = qp.m_receive.at(qp.m_receive.taken);
    size_t room = 0;
    const bool valid = memory.with_ranges(qp.m_pd,
                                          slot.sges.data(),
                                          slot.sges.size(),
                                          true,
                                          [&](const iovec* ranges, size_t count) {
                                              for (size_t i = 0; i < count; i++)
                                                  room += ranges[i].iov_len;
                                          }) == IBV_WC_SUCCESS;
    if (!valid || room < request.length)
        return false; // the receive completes with its error on the staged path
    m_in_place_sges.assign(slot.sges.begin(), slot.sges.end());
    return true;
}

bool rc_responder::receive_in_place(const rc_wire::header& request)
{
    const int fd = m_connection.get();
    const memory_region_table& memory = m_qp.context().memory_regions();
    const bool is_write = request.type == rc_wire::kind::write ||
                          request.type == rc_wire::kind::write_with_imm;
    uint32_t done = 0;
    while (done < request.length) {
        if (!rc_wire::wait_until_ready(
                fd, POLLIN, m_stop.get(), rc_wire::clock::time_point::max()))
            return false;
        ssize_t got = 0;
        int error = 0;
        // The memory is looked up again for every piece: it stays registered while
        // bytes land in it.
        bool valid = false;
        if (is_write) {
            valid = memory.with_remote_target(
                m_qp.m_pd,
                request.rkey,
                request.remote_addr + done,
                request.length - done,
                [&](uint8_t* target) {
                    got = recv(fd, target, request.length - done, MSG_DONTWAIT);
                    error = errno;
                });
        } else {
            valid = memory.with_ranges(m_qp.m_pd,
                                       m_in_place_sges.data(),
                                       m_in_place_sges.size(),
                                       true,
                                       [&](const iovec* ranges, size_t count) {
                                           got = receive_ranges(
                                               fd, ranges, count, done, request.length);
                                           error = errno;
                                       }) == IBV_WC_SUCCESS;
        }
        if (!valid || got == 0)
            return false; // deregistered meanwhile, or the peer went
        if (got > 0)
            done += static_cast<uint32_t>(got);
        else if (error != EAGAIN && error != EWOULDBLOCK && error != EINTR)
            return false;
    }
    return true;
}

ssize_t rc_responder::receive_ranges(
    int fd, const iovec* ranges, size_t count, uint32_t done, uint32_t length)
{
    iovec rest[device_limits::max_sge];
    size_t used = 0;
    size_t skip = done;
    size_t wanted = length - done;
    for (size_t i = 0; i < count && wanted > 0; i++) {
        if (skip >= ranges[i].iov_len) {
            skip -= ranges[i].iov_len;
            continue;
        }
        const size_t piece = std::min(ranges[i].iov_len - skip, wanted);
        rest[used++] = { static_cast<uint8_t*>(ranges[i].iov_base) + skip, piece };
        wanted -= piece;
        skip = 0;
    }
    msghdr message{};
    message.msg_iov = rest;
    message.msg_iovlen = used;
    return recvmsg(fd, &message, MSG_DONTWAIT);
}

rc_wire::kind rc_responder::remote_access_locked(const rc_wire::header& request,
                                                 bool write)
{
    rc_queue_pair& qp = m_qp;
    const unsigned needed = write ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;
    const uint32_t length = write ? request.length : request.detail;
    const bool qp_allows = (qp.m_attr.qp_access_flags & needed) != 0;
    if (!write && length > device_limits::max_message_size)
        return rc_wire::kind::nak_invalid;
    if (!write && m_payload.size() < length)
        m_payload.resize(length);
    const memory_region_table& memory = qp.context().memory_regions();
    // A zero-length read or write names no memory: its rkey and address are not
    // checked (IBA C9-88), so it serves as a probe that the peer still answers.
    const bool allowed =
        qp_allows &&
        (length == 0 ||
         (write && m_payload_in_place
              ? memory.with_remote_target(
                    qp.m_pd, request.rkey, request.remote_addr, length, [](uint8_t*) {})
              : memory.remote_access(qp.m_pd,
                                     request.rkey,
                                     request.remote_addr,
                                     m_payload.data(),
                                     length,
                                     write)));
    if (allowed) {
        if (write)
            return rc_wire::kind::ack;
        m_response_length = length;
        return rc_wire::kind::read_response;
    }
    warn("RC QP 0x%x: an RDMA %s of %u bytes at 0x%llx with rkey 0x%x was refused (%s); "
         "NAK to the requester, this QP goes to ERR with IBV_EVENT_QP_ACCESS_ERR",
         qp.m_shell.verbs.qp_num,
         write ? "write" : "read",
         length,
         static_cast<unsigned long long>(request.remote_addr),
         request.rkey,
         qp_allows ? "the rkey, its range or its access flags do not allow it"
                   : (write ? "the QP's access flags lack IBV_ACCESS_REMOTE_WRITE"
                            : "the QP's access flags lack IBV_ACCESS_REMOTE_READ"));
    qp.enter_error_locked("a remote access violation", IBV_EVENT_QP_ACCESS_ERR, true);
    return rc_wire::kind::nak_access;
}

rc_wire::kind rc_responder::receive_locked(const rc_wire::header& request, bool is_write)
{
    rc_queue_pair& qp = m_qp;
    if (qp.m_receive.taken == qp.m_receive.posted)
        return rc_wire::kind::nak_rnr;
    const uint64_t index = qp.m_receive.taken++;
    const bool with_imm = is_write || request.type == rc_wire::kind::send_with_imm;
    if (is_write) {
        qp.complete_receive_locked(index,
                                   IBV_WC_SUCCESS,
                                   IBV_WC_RECV_RDMA_WITH_IMM,
                                   request.length,
                                   &request.imm);
        return rc_wire::kind::ack;
    }
    const receive_slot& slot = qp.m_receive.at(index);
    const ibv_wc_status status =
        m_payload_in_place ? IBV_WC_SUCCESS
                           : qp.context().memory_regions().scatter(qp.m_pd,
                                                                   slot.sges.data(),
                                                                   slot.sges.size(),
                                                                   m_payload.data(),
                                                                   request.length);
    if (status != IBV_WC_SUCCESS) {
        qp.complete_receive_locked(index, status);
        qp.enter_error_locked(status == IBV_WC_LOC_LEN_ERR
                                  ? "a message did not fit its receive WR"
                                  : "a receive WR named memory it may not write",
                              IBV_EVENT_QP_FATAL,
                              false);
        return status == IBV_WC_LOC_LEN_ERR ? rc_wire::kind::nak_invalid
                                            : rc_wire::kind::nak_operational;
    }
    qp.complete_receive_locked(index,
                               IBV_WC_SUCCESS,
                               IBV_WC_RECV,
                               request.length,
                               with_imm ? &request.imm : nullptr);
    return rc_wire::kind::ack;
}

} // namespace spead_emu
