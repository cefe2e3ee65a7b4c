/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The responder of an RC QP: a thread that accepts the peer requester's connection on
// the QP's listening port and executes its requests in PSN order: a SEND lands in the
// oldest posted receive, an RDMA write in the memory its rkey names (checked for
// bounds and IBV_ACCESS_REMOTE_WRITE), each acknowledged once executed; an RDMA read
// (IBV_ACCESS_REMOTE_READ) is answered with the bytes. No receive
// posted: an RNR NAK, and requests are discarded until the refused one comes again.
// Duplicates (after a reconnection) are acknowledged without being executed again.
#ifndef SPEAD_EMU_RC_RESPONDER_H
#define SPEAD_EMU_RC_RESPONDER_H

#include "rc_wire.h"
#include "unique_fd.h"

#include <infiniband/verbs.h>
#include <sys/uio.h>

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
    // An RDMA write (payload into memory) or read (memory into m_payload, for the
    // response), after the rkey, bounds and access checks.
    rc_wire::kind remote_access_locked(const rc_wire::header& request, bool write);
    // Whether \p request, a write or a send, will be executed as it stands (in
    // sequence, access allowed, a receive there that holds it): then its payload is
    // read straight into the target memory or the receive's SGEs by receive_in_place
    // (false: the connection is to be dropped).
    bool in_place_allowed_locked(const rc_wire::header& request);
    bool receive_in_place(const rc_wire::header& request);
    // recvmsg into \p ranges from byte \p done of a message of \p length bytes.
    static ssize_t receive_ranges(
        int fd, const iovec* ranges, size_t count, uint32_t done, uint32_t length);
    rc_wire::kind receive_locked(const rc_wire::header& request, bool is_write);

    rc_queue_pair& m_qp;
    unique_fd m_listening;
    unique_fd m_doorbell;
    unique_fd m_stop; // readable once stopping
    std::atomic<bool> m_stopping{ false };
    std::thread m_thread;

    unique_fd m_connection;
    uint32_t m_connection_source = 0;     // the qp_num its hello named
    std::vector<uint8_t> m_payload;       // a request's payload, or a read response's
    bool m_payload_in_place = false;      // the payload is already where it belongs
    std::vector<ibv_sge> m_in_place_sges; // the receive a send lands in
    uint32_t m_response_length = 0;       // bytes of m_payload the response carries
    bool m_in_rnr = false; // requests are discarded until the refused PSN comes again
};

} // namespace spead_emu

#endif
