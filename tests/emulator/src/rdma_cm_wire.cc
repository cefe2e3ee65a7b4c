/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The emulated CM's messages (REQ, REP, REJ, RTU, DREQ, DREP) over the TCP connection
// from the active id to the listening id's IP:port: fixed-size records, integers in
// network byte order.
#include "rdma_cm_id.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace spead_emu {

namespace {

bool transfer_all(int socket, uint8_t* data, size_t length, bool sending)
{
    while (length > 0) {
        const ssize_t done = sending ? send(socket, data, length, MSG_NOSIGNAL)
                                     : recv(socket, data, length, 0);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            return false;
        data += done;
        length -= static_cast<size_t>(done);
    }
    return true;
}

} // namespace

bool send_cm_message(int socket, const cm_message& message)
{
    cm_message wire = message;
    wire.parameters.qp_num = htonl(message.parameters.qp_num);
    wire.parameters.psn = htonl(message.parameters.psn);
    wire.status = static_cast<int32_t>(htonl(static_cast<uint32_t>(message.status)));
    return transfer_all(socket, reinterpret_cast<uint8_t*>(&wire), sizeof(wire), true);
}

int receive_cm_message(int socket, cm_message& message)
{
    auto* bytes = reinterpret_cast<uint8_t*>(&message);
    // The first byte tells a clean end of stream from a message.
    ssize_t first;
    do {
        first = recv(socket, bytes, 1, 0);
    } while (first < 0 && errno == EINTR);
    if (first <= 0)
        return static_cast<int>(first);
    if (!transfer_all(socket, bytes + 1, sizeof(message) - 1, false)) {
        if (errno == 0)
            errno = ECONNRESET;
        return -1;
    }
    message.parameters.qp_num = ntohl(message.parameters.qp_num);
    message.parameters.psn = ntohl(message.parameters.psn);
    message.status = static_cast<int32_t>(ntohl(static_cast<uint32_t>(message.status)));
    message.private_data_len =
        std::min<uint8_t>(message.private_data_len, sizeof(message.private_data));
    return 1;
}

void tune_cm_socket(int socket)
{
    const int on = 1;
    const int idle_s = 1, interval_s = 1, probes = 3;
    const unsigned int user_timeout_ms = 4000;
    setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    // rdma_cm on hardware watches nothing once connected: SPEAD_EMU_CM_KEEPALIVE=0
    // models that (a path that dies silently then shows only through the QP's traffic).
    const char* keepalive = getenv("SPEAD_EMU_CM_KEEPALIVE");
    if (keepalive != nullptr && strcmp(keepalive, "0") == 0)
        return;
    setsockopt(socket, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
    setsockopt(socket, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
    setsockopt(socket, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof(interval_s));
    setsockopt(socket, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
    setsockopt(
        socket, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
}

cm_message make_cm_message(cm_message_type type,
                           const rdma_conn_param* param,
                           const cm_peer_parameters& local)
{
    cm_message message;
    message.type = type;
    message.parameters = local;
    if (param != nullptr && param->private_data != nullptr) {
        message.private_data_len =
            std::min<uint8_t>(param->private_data_len, sizeof(message.private_data));
        memcpy(message.private_data, param->private_data, message.private_data_len);
    }
    return message;
}

} // namespace spead_emu
