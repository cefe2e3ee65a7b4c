/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The requester of an RC QP: a thread that connects to the peer's responder, transmits
// posted send WRs in order (reading registered memory at transmit time), completes
// them when the peer acknowledges, and turns NAKs, silence and lost connections into
// the verbs errors: RNR retries then IBV_WC_RNR_RETRY_EXC_ERR, ACK timeouts and
// reconnections then IBV_WC_RETRY_EXC_ERR, IBV_WC_REM_*_ERR from the responder. A
// timeout counts only while TCP cannot deliver (a link down, a host gone): a peer
// process the scheduler starves is not a failure, as a NIC answers for its host.
// In ERR it flushes both queues of its QP.
#ifndef SPEAD_EMU_RC_REQUESTER_H
#define SPEAD_EMU_RC_REQUESTER_H

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
    // \p payload: the bytes of a read response (response.length of them).
    void handle_response_locked(const rc_wire::header& response, const uint8_t* payload);
    void write_output();
    bool output_pending() const
    {
        return m_output_done < m_output_size || m_payload_done < m_payload_total;
    }
    // sendmsg of the payload's ranges from m_payload_done on: the bytes sent, or -1.
    ssize_t send_ranges(const iovec* ranges, size_t count);
    // Completes the WRs before \p index successfully (the peer acknowledged them).
    void acknowledge_through_locked(uint64_t index);
    // Fails the oldest outstanding WR with \p status and puts the QP in ERR.
    void fail_oldest_locked(ibv_wc_status status, const char* reason);
    // A timeout or a lost connection: one more retry, or IBV_WC_RETRY_EXC_ERR.
    void retry_locked(clock::time_point now, const char* reason);
    // The next message's length; its bytes are written into m_output after this.
    void set_output_size(size_t size);
    void drop_connection();
    // Whether TCP has delivered every byte written to the peer's host and sees no
    // retransmissions: then a missing acknowledgement means a slow peer process, which
    // a NIC would not wait for, not a broken path (so no retry is counted).
    bool path_delivers() const;
    // A message the responder discards: bytes in flight, so a broken path shows.
    void queue_probe();

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
    // The message being written: its header (and inline payload) in m_output, then
    // the payload straight from the SGEs' registered memory.
    std::vector<uint8_t> m_output;
    size_t m_output_size = 0; // bytes of m_output (the buffer only grows)
    size_t m_output_done = 0;
    std::vector<ibv_sge> m_payload_sges;
    size_t m_payload_total = 0;
    size_t m_payload_done = 0;
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
