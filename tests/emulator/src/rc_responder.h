/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The responder of an RC QP: a thread that accepts the peer requester's connection on
// the QP's listening port and executes its requests in PSN order: a SEND lands in the
// oldest posted receive, an RDMA write in the memory its rkey names (checked for
// bounds and IBV_ACCESS_REMOTE_WRITE), each acknowledged once executed. No receive
// posted: an RNR NAK, and requests are discarded until the refused one comes again.
// Duplicates (after a reconnection) are acknowledged without being executed again.
#ifndef SPEAD_EMU_RC_RESPONDER_H
#define SPEAD_EMU_RC_RESPONDER_H

#include "rc_wire.h"
#include "unique_fd.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace spead_emu {

class rc_queue_pair;

class rc_responder
{
public:
    rc_responder(rc_queue_pair& qp, int listening_fd);
    ~rc_responder();
    void start();
    void stop();
    // Wakes the thread after a state change.
    void ring_doorbell();

private:
    void run();
    void accept_connection();
    // Reads one request and answers it: false when the connection is to be dropped.
    bool serve_request();
    // Executes \p request (payload in m_payload) under the QP's mutex; the response.
    rc_wire::kind execute_locked(const rc_wire::header& request);
    rc_wire::kind write_locked(const rc_wire::header& request);
    rc_wire::kind receive_locked(const rc_wire::header& request, bool is_write);

    rc_queue_pair& m_qp;
    unique_fd m_listening;
    unique_fd m_doorbell;
    unique_fd m_stop; // readable once stopping
    std::atomic<bool> m_stopping{ false };
    std::thread m_thread;

    unique_fd m_connection;
    uint32_t m_connection_source = 0; // the qp_num its hello named
    std::vector<uint8_t> m_payload;
    bool m_in_rnr = false; // requests are discarded until the refused PSN comes again
};

} // namespace spead_emu

#endif
