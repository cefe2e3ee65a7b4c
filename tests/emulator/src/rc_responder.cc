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
    if (m_payload.size() < request.length)
        m_payload.resize(request.length);
    if (!rc_wire::read_all(fd, m_payload.data(), request.length, m_stop.get(), forever))
        return false;
    rc_wire::header response{};
    {
        std::lock_guard<std::mutex> lock(m_qp.m_mutex);
        if (m_connection_source != m_qp.m_attr.dest_qp_num)
            return false; // a requester this QP is not connected to
        if (m_qp.m_state == IBV_QPS_ERR)
            return true; // an errored QP is silent: the requester times out
        response.type = execute_locked(request);
        if (response.type == rc_wire::kind::hello)
            return true; // discarded without a response
        response.detail = m_qp.m_attr.min_rnr_timer;
    }
    response.magic = rc_wire::header_magic;
    response.psn = request.psn;
    response.source_qpn = m_qp.m_shell.verbs.qp_num;
    const auto deadline = rc_wire::clock::now() + std::chrono::seconds(10);
    return rc_wire::write_all(fd, &response, sizeof(response), m_stop.get(), deadline);
}

// The response to \p request; kind::hello means none (a request discarded).
rc_wire::kind rc_responder::execute_locked(const rc_wire::header& request)
{
    rc_queue_pair& qp = m_qp;
    const uint32_t expected = qp.m_expected_receive_psn;
    if (rc_wire::psn_before(request.psn, expected))
        return rc_wire::kind::ack; // a duplicate: acknowledged, not executed again
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
        result = write_locked(request);
        break;
    case rc_wire::kind::write_with_imm:
        // The receive is checked first: without one the write is refused whole.
        if (qp.m_receive.taken == qp.m_receive.posted) {
            result = rc_wire::kind::nak_rnr;
            break;
        }
        result = write_locked(request);
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

rc_wire::kind rc_responder::write_locked(const rc_wire::header& request)
{
    rc_queue_pair& qp = m_qp;
    const bool allowed =
        (qp.m_attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) &&
        qp.context().memory_regions().write_remote(
            qp.m_pd, request.rkey, request.remote_addr, m_payload.data(), request.length);
    if (allowed)
        return rc_wire::kind::ack;
    warn("RC QP 0x%x: an RDMA write of %u bytes to 0x%llx with rkey 0x%x was refused "
         "(%s); NAK to the requester, this QP goes to ERR with IBV_EVENT_QP_ACCESS_ERR",
         qp.m_shell.verbs.qp_num,
         request.length,
         static_cast<unsigned long long>(request.remote_addr),
         request.rkey,
         (qp.m_attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE)
             ? "the rkey, its range or its access flags do not allow it"
             : "the QP's access flags lack IBV_ACCESS_REMOTE_WRITE");
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
    const rc_receive_slot& slot = qp.m_receive.at(index);
    const ibv_wc_status status = qp.context().memory_regions().scatter(
        qp.m_pd, slot.sges.data(), slot.sges.size(), m_payload.data(), request.length);
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
