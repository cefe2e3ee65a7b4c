/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The requester of an RC QP: a thread that connects to the peer's responder, transmits
// posted send WRs in order (reading registered memory at transmit time), completes
// them when the peer acknowledges, and turns NAKs, silence and lost connections into
// the verbs errors: RNR retries then IBV_WC_RNR_RETRY_EXC_ERR, ACK timeouts and
// reconnections then IBV_WC_RETRY_EXC_ERR, IBV_WC_REM_*_ERR from the responder.
// In ERR it flushes both queues of its QP.
#ifndef SPEAD_EMU_RC_REQUESTER_H
#define SPEAD_EMU_RC_REQUESTER_H

#include "rc_wire.h"
#include "unique_fd.h"

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace spead_emu {

class rc_queue_pair;

class rc_requester
{
public:
    explicit rc_requester(rc_queue_pair& qp);
    ~rc_requester();
    void start();
    // Joins the thread; afterwards the QP is no longer touched.
    void stop();
    // Wakes the thread: new WRs, a state change, WRs to flush.
    void ring_doorbell();

private:
    using clock = rc_wire::clock;
    void run();
    // Decides what to do next under the QP's mutex; returns the time to wake up by.
    clock::time_point step();
    void wait(clock::time_point deadline);
    void connect_locked(clock::time_point now);
    void connection_ready(clock::time_point now);
    void prepare_next_message_locked(clock::time_point now);
    void read_responses();
    void handle_response_locked(const rc_wire::header& response);
    void write_output();
    // Completes the WRs before \p index successfully (the peer acknowledged them).
    void acknowledge_through_locked(uint64_t index);
    // Fails the oldest outstanding WR with \p status and puts the QP in ERR.
    void fail_oldest_locked(ibv_wc_status status, const char* reason);
    // A timeout or a lost connection: one more retry, or IBV_WC_RETRY_EXC_ERR.
    void retry_locked(clock::time_point now, const char* reason);
    void drop_connection();

    rc_queue_pair& m_qp;
    unique_fd m_doorbell;
    std::atomic<bool> m_stopping{ false };
    std::thread m_thread;

    // The thread's own state.
    uint64_t m_generation = 0;
    unique_fd m_connection;
    bool m_connecting = false;
    bool m_connection_lost = false;
    clock::time_point m_connect_started{};
    clock::time_point m_next_connect{};
    std::vector<uint8_t> m_output; // the message being written: header and payload
    size_t m_output_done = 0;
    std::vector<uint8_t> m_input; // responses read so far
    clock::time_point m_last_progress{};
    clock::time_point m_pause_until{}; // after an RNR NAK
    bool m_rewind_pending = false;
    uint64_t m_rewind_to = 0;
    unsigned m_retries = 0;
    unsigned m_rnr_retries = 0;
};

} // namespace spead_emu

#endif
