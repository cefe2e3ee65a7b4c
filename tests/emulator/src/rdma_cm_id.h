/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The stand-in librdmacm's objects: event channels (a real pollable fd carrying CM
// events) and rdma_cm_ids with the state the connection handshake needs. The files
// rdma_cm_*.cc implement rdma_cma.h on top of them, one job each.
#ifndef SPEAD_EMU_RDMA_CM_ID_H
#define SPEAD_EMU_RDMA_CM_ID_H

#include "unique_fd.h"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <condition_variable>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace spead_emu {

// rdma_cm's private data limits on RoCE and InfiniBand (the IB CM message sizes less
// rdma_cm's own header): what a REQ, REP and REJ carry.
constexpr int cm_connect_private_data = 56;
constexpr int cm_accept_private_data = 196;
constexpr int cm_reject_private_data = 148;
// IB CM reject reasons rdma_cm reports as the REJECTED event's status.
constexpr int cm_reject_invalid_service_id = 8; // nothing listens on the port
constexpr int cm_reject_consumer_defined = 28;  // the peer called rdma_reject

// An event handed out by rdma_get_cm_event, with room for its private data.
struct cm_event_shell {
    rdma_cm_event event{};
    uint8_t private_data[cm_accept_private_data]{};
};

// rdma_event_channel plus its queue. The fd is an eventfd in semaphore mode, one count
// per queued event, so poll/select/epoll and O_NONBLOCK (fcntl on channel->fd) behave as
// on /dev/infiniband/rdma_cm; closing it never wakes a thread blocked in
// rdma_get_cm_event, as closing the real fd does not either.
struct cm_channel_shell {
    rdma_event_channel channel{}; // first: the application's pointer is to it
    std::mutex mutex;
    std::deque<cm_event_shell*> queue;
};
cm_channel_shell* new_channel_shell();
void destroy_channel_shell(cm_channel_shell* shell);

enum class cm_state {
    idle,
    address_resolved,
    route_resolved,
    listening,
    connecting,       // active: REQ sent, waiting for REP or REJ
    request_received, // passive: CONNECT_REQUEST reported, not yet accepted
    accepted,         // passive: REP sent, waiting for RTU
    connected,
    disconnected
};

// What a REQ or REP carries besides private data.
struct cm_peer_parameters {
    uint32_t qp_num = 0;
    uint32_t psn = 0;
    uint8_t responder_resources = 0;
    uint8_t initiator_depth = 0;
    uint8_t retry_count = 7;
    uint8_t rnr_retry_count = 7;
};

struct cm_id_shell {
    rdma_cm_id id{}; // first: the application's pointer is to it
    cm_channel_shell* owned_channel = nullptr; // synchronous ids (no channel given)
    std::mutex mutex;
    cm_state state = cm_state::idle;
    // The TCP socket reserving the bound address and port; listening, or the connection
    // that carries the CM handshake and whose end is the peer's death.
    unique_fd socket;
    std::thread worker; // the accept loop of a listener, the handshake of a connection
    bool destroying = false;
    bool disconnect_sent = false;
    int events_unacknowledged = 0; // read by rdma_get_cm_event, not yet acknowledged
    std::condition_variable acknowledged; // events_unacknowledged went down
    cm_peer_parameters local;
    cm_peer_parameters peer;
    ibv_sa_path_rec path{};
    // rdma_create_ep on a passive endpoint: the QP rdma_get_request gives each new id.
    std::optional<ibv_qp_init_attr> endpoint_qp_attr;
    ibv_pd* endpoint_pd = nullptr;
};

inline cm_id_shell* shell_of(rdma_cm_id* id)
{
    return reinterpret_cast<cm_id_shell*>(id);
}
inline cm_channel_shell* shell_of(rdma_event_channel* channel)
{
    return reinterpret_cast<cm_channel_shell*>(channel);
}

// --- rdma_cm_events.cc ---------------------------------------------------------------
// Queues an event for the id on its current channel (listen_id set for CONNECT_REQUEST).
void post_cm_event(cm_id_shell* shell,
                   rdma_cm_event_type type,
                   int status,
                   const rdma_conn_param* param = nullptr,
                   int private_data_len = 0,
                   rdma_cm_id* listen_id = nullptr);
// Drops the id's queued events (destroy) or moves them to its new channel (migrate).
void discard_cm_events(cm_id_shell* shell);
void move_cm_events(cm_id_shell* shell, cm_channel_shell* from, cm_channel_shell* to);
// Waits up to `bound` for the application to acknowledge the events of the id it read
// (another thread may be handling one); returns how many are still unacknowledged.
// Counted when read, under the channel's lock, so once the id's queued events are
// discarded no reader can add to the count.
int wait_for_acknowledgements(cm_id_shell* shell, std::chrono::milliseconds bound);
// librdmacm's synchronous ids: waits for the id's next event on its own channel, keeps it
// in id->event and turns a failure into -1 and errno as librdmacm does.
int complete_synchronously(cm_id_shell* shell);

// --- rdma_cm_address.cc --------------------------------------------------------------
// Binds the id to the emulated device owning the IPv4 address (none for INADDR_ANY);
// -1 with errno EADDRNOTAVAIL or ENODEV.
int attach_device(rdma_cm_id* id, const sockaddr_in& address);
// The route's GIDs from its addresses: the IPv4-mapped ones (RoCEv2).
void set_route_gids(rdma_cm_id* id);
// The GID table index of the id's source address on its port.
uint8_t source_gid_index(rdma_cm_id* id);

// --- rdma_cm_wire.cc -----------------------------------------------------------------
enum class cm_message_type : uint8_t { req = 1, rep, rej, rtu, dreq, drep };
struct cm_message {
    cm_message_type type{};
    uint8_t private_data_len = 0;
    uint8_t reserved[2]{};
    // Integers in network byte order on the wire, host order here.
    int32_t status = 0;            // a REJ's reason
    cm_peer_parameters parameters; // the sender's
    uint8_t private_data[cm_accept_private_data]{};
};
bool send_cm_message(int socket, const cm_message& message);
// 1 with a message, 0 at the peer's end of stream, -1 with errno (ETIMEDOUT: keepalive).
int receive_cm_message(int socket, cm_message& message);
// Keepalive (a peer silent for ~4 s is dead) and no Nagle delay, as the CM's MADs have.
void tune_cm_socket(int socket);
cm_message make_cm_message(cm_message_type type,
                           const rdma_conn_param* param,
                           const cm_peer_parameters& local);

// --- rdma_cm_qp.cc -------------------------------------------------------------------
// librdmacm's QP walk: RTR then RTS with the peer's qpn and psn; ERR at rdma_disconnect.
int move_qp_to_rtr_and_rts(rdma_cm_id* id);
void move_qp_to_error(rdma_cm_id* id);
bool has_qp(cm_id_shell* shell);

// --- rdma_cm_connection.cc -----------------------------------------------------------
// Ends the id's thread (accept loop or handshake) and closes its socket: rdma_destroy_id.
void stop_connection(cm_id_shell* shell);
// librdmacm's handling of a CONNECT_RESPONSE the application reads: with a QP on the id,
// RTR and RTS, the RTU, and the event becomes ESTABLISHED (CONNECT_ERROR on failure).
void process_connect_response(rdma_cm_event* event);

} // namespace spead_emu

#endif
