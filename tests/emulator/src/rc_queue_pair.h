/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// A reliable connected (RC) queue pair: its state machine with the attribute masks
// each transition requires, its send and receive queues and the completions it
// produces. Its requester (rc_requester) and responder (rc_responder) threads move the
// messages over the RC wire (rc_wire.h). A peer of the raw-packet queue_pair behind
// the same verbs; nothing of it runs on the raw-packet path.
#ifndef SPEAD_EMU_RC_QUEUE_PAIR_H
#define SPEAD_EMU_RC_QUEUE_PAIR_H

#include "queue_pair_core.h"
#include "work_ring.h"

#include <infiniband/verbs.h>
#include <netinet/in.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace spead_emu {

class rc_requester;
class rc_responder;

struct rc_send_slot {
    uint64_t wr_id = 0;
    ibv_wr_opcode opcode = IBV_WR_SEND;
    bool signalled = false;
    bool is_inline = false;
    uint32_t psn = 0;
    uint32_t imm = 0;
    uint64_t remote_addr = 0;
    uint32_t rkey = 0;
    std::vector<ibv_sge> sges;
    std::vector<uint8_t> inline_data;
};

class rc_queue_pair : public queue_pair_core<rc_queue_pair, rc_send_slot>
{
public:
    // ibv_create_qp with IBV_QPT_RC: nullptr with errno set.
    static ibv_qp* create(protection_domain& pd, ibv_qp_init_attr& attr);
    static rc_queue_pair* from(ibv_qp* qp);
    ~rc_queue_pair();

    int modify(const ibv_qp_attr& attr, int mask);
    int query(ibv_qp_attr& attr, ibv_qp_init_attr& init_attr);
    int destroy();
    int post_send(ibv_send_wr* wr, ibv_send_wr** bad_wr);
    int post_receive(ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
    // Polling a completion frees the slots up to and including its WR.
    void release_slots_through(bool send_queue, uint64_t index);

private:
    friend class queue_pair_core<rc_queue_pair, rc_send_slot>;
    friend class rc_requester;
    friend class rc_responder;

    rc_queue_pair(protection_domain& pd,
                  completion_queue& send_cq,
                  completion_queue& receive_cq,
                  const ibv_qp_init_attr& attr,
                  int listening_fd,
                  uint16_t port);

    // Checks \p attr under \p mask for the transition, and applies it: 0 or EINVAL.
    int apply_locked(const ibv_qp_attr& attr, int mask, ibv_qp_state target);
    // To ERR: a completion error, or (with \p event) one only an async event reports.
    void enter_error_locked(const char* reason, ibv_event_type event, bool post_event);
    // As ibv_modify_qp to ERR: no async event.
    void enter_error_locked(const char* reason)
    {
        enter_error_locked(reason, IBV_EVENT_QP_FATAL, false);
    }
    void reset_locked();
    // In ERR, every outstanding WR of both queues completes with IBV_WC_WR_FLUSH_ERR.
    void flush_locked();
    void
    complete_send_locked(const rc_send_slot& slot, uint64_t index, ibv_wc_status status);
    void complete_receive_locked(uint64_t index,
                                 ibv_wc_status status,
                                 ibv_wc_opcode opcode = IBV_WC_RECV,
                                 uint32_t byte_len = 0,
                                 const uint32_t* imm = nullptr);
    void complete_locked(completion_queue& cq, completion_entry& entry);
    void wake_threads();

    // Under the core's m_mutex too, which is the threads' view of all of it; a reset's
    // new generation starts the wire afresh.
    ibv_qp_attr m_attr{}; // the attributes set so far (those query reports)
    in_addr m_peer_address{};
    uint32_t m_next_send_psn = 0;        // given to the next posted send WR
    uint32_t m_expected_receive_psn = 0; // the responder's next PSN
    uint64_t m_send_acknowledged = 0;    // m_send's WRs before it are complete (its
                                         // taken: transmitted by the requester)

    std::unique_ptr<rc_requester> m_requester;
    std::unique_ptr<rc_responder> m_responder;
};

} // namespace spead_emu

#endif
