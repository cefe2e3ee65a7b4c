/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The connection handshake: rdma_listen, rdma_connect, rdma_accept, rdma_reject,
// rdma_establish and rdma_disconnect. A listener is a TCP listening socket on the id's
// IP:port; each connection is a TCP connection carrying the CM messages, read by one
// thread per id that turns them (and the connection's end: a closed socket, a failed
// keepalive) into the id's events.
#include "log.h"
#include "rdma_cm_id.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace spead_emu {

namespace {

// How long an active id waits for the TCP connection (a silent host): then UNREACHABLE.
constexpr int connect_timeout_ms = 5000;
// How long a listener waits for the REQ on a new connection.
constexpr int request_timeout_s = 2;

int fail(int error)
{
    errno = error;
    return -1;
}

// The parameters an event reports from a peer's REQ or REP.
rdma_conn_param event_param(const cm_message& message)
{
    rdma_conn_param param{};
    param.private_data = message.private_data;
    param.private_data_len = message.private_data_len;
    param.responder_resources = message.parameters.responder_resources;
    param.initiator_depth = message.parameters.initiator_depth;
    param.retry_count = message.parameters.retry_count;
    param.rnr_retry_count = message.parameters.rnr_retry_count;
    param.qp_num = message.parameters.qp_num;
    return param;
}

// Fills what the id's side of a REQ or REP says: its QP (or the application's qp_num)
// and the application's limits.
void store_local(rdma_cm_id* id, const rdma_conn_param* param)
{
    cm_peer_parameters& local = shell_of(id)->local;
    local.qp_num = id->qp != nullptr ? id->qp->qp_num : (param ? param->qp_num : 0);
    if (param != nullptr) {
        local.responder_resources = param->responder_resources;
        local.initiator_depth = param->initiator_depth;
        local.retry_count = std::min<uint8_t>(param->retry_count, 7);
        local.rnr_retry_count = std::min<uint8_t>(param->rnr_retry_count, 7);
    }
}

bool send_locked(cm_id_shell* shell, const cm_message& message)
{
    std::lock_guard<std::mutex> lock(shell->mutex);
    return shell->socket && send_cm_message(shell->socket.get(), message);
}

// The connection's end without a DREQ: a dead peer, or one that destroyed its id.
void connection_lost(cm_id_shell* shell, int error)
{
    cm_state was;
    {
        std::lock_guard<std::mutex> lock(shell->mutex);
        if (shell->destroying)
            return;
        was = shell->state;
        shell->state = cm_state::disconnected;
    }
    trace("rdma_cm: connection of id %p ended (%s)", (void*)shell, strerror(error));
    switch (was) {
    case cm_state::connecting:
        post_cm_event(shell, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
        break;
    case cm_state::accepted:
        post_cm_event(shell, RDMA_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT);
        break;
    case cm_state::connected:
        post_cm_event(shell, RDMA_CM_EVENT_DISCONNECTED, 0);
        post_cm_event(shell, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
        break;
    default:
        break; // an unaccepted request, or already disconnected: nothing to report
    }
}

// Handles one message; false when the connection is over for this id.
bool handle_message(cm_id_shell* shell, const cm_message& message)
{
    cm_state state;
    {
        std::lock_guard<std::mutex> lock(shell->mutex);
        state = shell->state;
    }
    switch (message.type) {
    case cm_message_type::rep: {
        if (state != cm_state::connecting)
            break;
        {
            std::lock_guard<std::mutex> lock(shell->mutex); // rdma_init_qp_attr reads it
            shell->peer = message.parameters;
        }
        // As librdmacm, the QP moves when the application reads the event
        // (process_connect_response): the handshake thread never touches a QP.
        rdma_conn_param param = event_param(message);
        post_cm_event(
            shell, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, &param, cm_accept_private_data);
        break;
    }
    case cm_message_type::rej: {
        {
            std::lock_guard<std::mutex> lock(shell->mutex);
            shell->state = cm_state::disconnected;
        }
        rdma_conn_param param = event_param(message);
        post_cm_event(shell,
                      RDMA_CM_EVENT_REJECTED,
                      message.status,
                      &param,
                      cm_reject_private_data);
        return false;
    }
    case cm_message_type::rtu:
        if (state != cm_state::accepted)
            break;
        {
            std::lock_guard<std::mutex> lock(shell->mutex);
            shell->state = cm_state::connected;
        }
        post_cm_event(shell, RDMA_CM_EVENT_ESTABLISHED, 0);
        break;
    case cm_message_type::dreq:
    case cm_message_type::drep: {
        // The QP stays as it is until the application's rdma_disconnect, as with
        // librdmacm; its sends to a peer that is gone fail on the RC wire.
        if (message.type == cm_message_type::dreq)
            send_locked(shell,
                        make_cm_message(cm_message_type::drep, nullptr, shell->local));
        {
            std::lock_guard<std::mutex> lock(shell->mutex);
            shell->state = cm_state::disconnected;
        }
        post_cm_event(shell, RDMA_CM_EVENT_DISCONNECTED, 0);
        post_cm_event(shell, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
        return false;
    }
    case cm_message_type::req:
        break;
    }
    return true;
}

void read_messages(cm_id_shell* shell)
{
    for (;;) {
        cm_message message;
        const int result = receive_cm_message(shell->socket.get(), message);
        if (result <= 0) {
            connection_lost(shell, result == 0 ? ECONNRESET : errno);
            return;
        }
        if (!handle_message(shell, message))
            return;
    }
}

// 0 or the errno of a TCP connect that waits at most connect_timeout_ms.
int connect_within_timeout(int socket, const sockaddr_in& destination)
{
    const int flags = fcntl(socket, F_GETFL);
    fcntl(socket, F_SETFL, flags | O_NONBLOCK);
    int error = 0;
    if (connect(socket,
                reinterpret_cast<const sockaddr*>(&destination),
                sizeof(destination)) != 0) {
        error = errno;
        if (error == EINPROGRESS) {
            pollfd waiting{ socket, POLLOUT, 0 };
            const int ready = poll(&waiting, 1, connect_timeout_ms);
            socklen_t length = sizeof(error);
            if (ready == 0)
                error = ETIMEDOUT;
            else if (ready < 0 ||
                     getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
                error = errno;
        }
    }
    fcntl(socket, F_SETFL, flags);
    return error;
}

void run_active(cm_id_shell* shell, cm_message request)
{
    const int error =
        connect_within_timeout(shell->socket.get(), shell->id.route.addr.dst_sin);
    if (error != 0) {
        {
            std::lock_guard<std::mutex> lock(shell->mutex);
            if (shell->destroying)
                return;
            shell->state = cm_state::disconnected;
        }
        // Nothing listening answers with the CM's REJ (invalid service ID); a silent
        // host lets the REQ time out.
        if (error == ECONNREFUSED)
            post_cm_event(shell, RDMA_CM_EVENT_REJECTED, cm_reject_invalid_service_id);
        else
            post_cm_event(shell, RDMA_CM_EVENT_UNREACHABLE, -error);
        return;
    }
    tune_cm_socket(shell->socket.get());
    if (!send_locked(shell, request)) {
        connection_lost(shell, errno);
        return;
    }
    read_messages(shell);
}

// A new passive id for a connection whose REQ arrived, reported on the listener's
// channel.
void report_request(cm_id_shell* listener,
                    unique_fd connection,
                    const cm_message& request)
{
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(
            listener->id.channel, &id, listener->id.context, listener->id.ps) != 0)
        return;
    cm_id_shell* shell = shell_of(id);
    socklen_t length = sizeof(id->route.addr.src_sin);
    getsockname(connection.get(), &id->route.addr.src_addr, &length);
    length = sizeof(id->route.addr.dst_sin);
    getpeername(connection.get(), &id->route.addr.dst_addr, &length);
    if (attach_device(id, id->route.addr.src_sin) != 0) {
        rdma_destroy_id(id); // the peer sees its REQ go unanswered: UNREACHABLE
        return;
    }
    set_route_gids(id);
    shell->peer = request.parameters;
    shell->state = cm_state::request_received;
    shell->socket = std::move(connection);
    // The reader starts first: once the event is out, the application may destroy the
    // id at any time. Until it accepts, the reader has nothing to report.
    shell->worker = std::thread(read_messages, shell);
    rdma_conn_param param = event_param(request);
    post_cm_event(shell,
                  RDMA_CM_EVENT_CONNECT_REQUEST,
                  0,
                  &param,
                  cm_connect_private_data,
                  &listener->id);
}

void run_listener(cm_id_shell* listener)
{
    for (;;) {
        unique_fd connection(
            accept4(listener->socket.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!connection) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return; // shut down by rdma_destroy_id
        }
        tune_cm_socket(connection.get());
        const timeval wait{ request_timeout_s, 0 };
        const timeval forever{ 0, 0 };
        setsockopt(connection.get(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
        cm_message request;
        if (receive_cm_message(connection.get(), request) != 1 ||
            request.type != cm_message_type::req)
            continue;
        setsockopt(connection.get(), SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever));
        report_request(listener, std::move(connection), request);
    }
}

// EINVAL beyond what the CM message carries on RoCE, as the kernel answers.
bool private_data_fits(const char* call, const rdma_conn_param* param, int limit)
{
    if (param == nullptr || param->private_data_len <= limit)
        return true;
    warn("%s: private_data_len %d is above the %d bytes its CM message carries on RoCE",
         call,
         param->private_data_len,
         limit);
    return false;
}

cm_state state_of(cm_id_shell* shell)
{
    std::lock_guard<std::mutex> lock(shell->mutex);
    return shell->state;
}

} // namespace

void stop_connection(cm_id_shell* shell)
{
    {
        std::lock_guard<std::mutex> lock(shell->mutex);
        shell->destroying = true;
        if (shell->socket)
            shutdown(shell->socket.get(), SHUT_RDWR);
    }
    if (shell->worker.joinable())
        shell->worker.join();
    shell->socket.reset();
}

void process_connect_response(rdma_cm_event* event)
{
    cm_id_shell* shell = shell_of(event->id);
    if (!has_qp(shell))
        return; // the application walks its own QP and calls rdma_establish
    int status = 0;
    if (move_qp_to_rtr_and_rts(&shell->id) != 0) {
        status = -errno;
        send_locked(shell, make_cm_message(cm_message_type::rej, nullptr, shell->local));
    } else {
        std::lock_guard<std::mutex> lock(shell->mutex);
        if (shell->state != cm_state::connecting || !shell->socket ||
            !send_cm_message(
                shell->socket.get(),
                make_cm_message(cm_message_type::rtu, nullptr, shell->local)))
            status = -ECONNRESET; // the peer went away meanwhile
        else
            shell->state = cm_state::connected;
    }
    event->event = status == 0 ? RDMA_CM_EVENT_ESTABLISHED : RDMA_CM_EVENT_CONNECT_ERROR;
    event->status = status;
}

} // namespace spead_emu

using spead_emu::cm_state;
using spead_emu::fail;

extern "C" {

int rdma_listen(rdma_cm_id* id, int backlog)
{
    if (id == nullptr)
        return fail(EINVAL);
    auto* shell = spead_emu::shell_of(id);
    if (!shell->socket || spead_emu::state_of(shell) != cm_state::idle)
        return fail(EINVAL); // rdma_bind_addr first, as rdma_cm requires
    if (listen(shell->socket.get(), backlog > 0 ? backlog : SOMAXCONN) != 0)
        return -1;
    shell->state = cm_state::listening;
    shell->worker = std::thread(spead_emu::run_listener, shell);
    return 0;
}

int rdma_connect(rdma_cm_id* id, rdma_conn_param* conn_param)
{
    if (id == nullptr)
        return fail(EINVAL);
    auto* shell = spead_emu::shell_of(id);
    if (spead_emu::state_of(shell) != cm_state::route_resolved)
        return fail(EINVAL); // rdma_resolve_route first
    if (!spead_emu::private_data_fits(
            "rdma_connect", conn_param, spead_emu::cm_connect_private_data))
        return fail(EINVAL);
    spead_emu::store_local(id, conn_param);
    const spead_emu::cm_message request = spead_emu::make_cm_message(
        spead_emu::cm_message_type::req, conn_param, shell->local);
    {
        std::lock_guard<std::mutex> lock(shell->mutex);
        shell->state = cm_state::connecting;
    }
    shell->worker = std::thread(spead_emu::run_active, shell, request);
    return shell->owned_channel != nullptr ? spead_emu::complete_synchronously(shell) : 0;
}

int rdma_accept(rdma_cm_id* id, rdma_conn_param* conn_param)
{
    if (id == nullptr)
        return fail(EINVAL);
    auto* shell = spead_emu::shell_of(id);
    const cm_state state = spead_emu::state_of(shell);
    if (state == cm_state::disconnected)
        return fail(ECONNRESET); // the peer went away before the answer
    if (state != cm_state::request_received)
        return fail(EINVAL);
    if (!spead_emu::private_data_fits(
            "rdma_accept", conn_param, spead_emu::cm_accept_private_data))
        return fail(EINVAL);
    spead_emu::store_local(id, conn_param);
    // As librdmacm: the passive QP is ready to receive and send before the REP goes.
    if (spead_emu::move_qp_to_rtr_and_rts(id) != 0)
        return -1;
    {
        std::lock_guard<std::mutex> lock(shell->mutex);
        shell->state = cm_state::accepted;
        if (!spead_emu::send_cm_message(
                shell->socket.get(),
                spead_emu::make_cm_message(
                    spead_emu::cm_message_type::rep, conn_param, shell->local)))
            return fail(ECONNRESET);
    }
    return shell->owned_channel != nullptr ? spead_emu::complete_synchronously(shell) : 0;
}

int rdma_reject(rdma_cm_id* id, const void* private_data, uint8_t private_data_len)
{
    if (id == nullptr)
        return fail(EINVAL);
    auto* shell = spead_emu::shell_of(id);
    if (spead_emu::state_of(shell) != cm_state::request_received)
        return fail(EINVAL);
    rdma_conn_param param{};
    param.private_data = private_data;
    param.private_data_len = private_data_len;
    if (!spead_emu::private_data_fits(
            "rdma_reject", &param, spead_emu::cm_reject_private_data))
        return fail(EINVAL);
    auto message =
        spead_emu::make_cm_message(spead_emu::cm_message_type::rej, &param, shell->local);
    message.status = spead_emu::cm_reject_consumer_defined;
    std::lock_guard<std::mutex> lock(shell->mutex);
    shell->state = cm_state::disconnected;
    if (!spead_emu::send_cm_message(shell->socket.get(), message))
        return fail(ECONNRESET);
    return 0;
}

int rdma_establish(rdma_cm_id* id)
{
    if (id == nullptr)
        return fail(EINVAL);
    auto* shell = spead_emu::shell_of(id);
    std::lock_guard<std::mutex> lock(shell->mutex);
    if (shell->state != cm_state::connecting)
        return fail(EINVAL);
    shell->state = cm_state::connected;
    if (!spead_emu::send_cm_message(
            shell->socket.get(),
            spead_emu::make_cm_message(
                spead_emu::cm_message_type::rtu, nullptr, shell->local)))
        return fail(ECONNRESET);
    return 0;
}

int rdma_disconnect(rdma_cm_id* id)
{
    if (id == nullptr)
        return fail(EINVAL);
    auto* shell = spead_emu::shell_of(id);
    const cm_state state = spead_emu::state_of(shell);
    if (state != cm_state::connected && state != cm_state::accepted &&
        state != cm_state::disconnected)
        return fail(EINVAL);
    // As librdmacm on InfiniBand and RoCE: the QP stops (flushes) before the DREQ goes.
    spead_emu::move_qp_to_error(id);
    if (state == cm_state::disconnected)
        return 0; // the peer disconnected first: its DREQ was answered
    std::lock_guard<std::mutex> lock(shell->mutex);
    if (shell->disconnect_sent)
        return 0;
    shell->disconnect_sent = true;
    spead_emu::send_cm_message(
        shell->socket.get(),
        spead_emu::make_cm_message(
            spead_emu::cm_message_type::dreq, nullptr, shell->local));
    return 0;
}

} // extern "C"
