/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What the raw-packet queue_pair and the rc_queue_pair share as peers behind the same
// verbs: the verbs object and its PD and CQs (counted while it lives), its
// capabilities, the lock over its state and work rings, posting receives, a reset,
// query's common answers and the completions it pushes. Each keeps what differs (how
// frames or messages move, the transitions it allows).
#ifndef SPEAD_EMU_QUEUE_PAIR_CORE_H
#define SPEAD_EMU_QUEUE_PAIR_CORE_H

#include "completion_queue.h"
#include "device.h"
#include "device_context.h"
#include "enum_names.h"
#include "log.h"
#include "object_shell.h"
#include "protection_domain.h"
#include "work_posting.h"
#include "work_ring.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <mutex>

namespace spead_emu {

template <typename Derived, typename SendSlot>
class queue_pair_core
{
public:
    ibv_qp* verbs() { return &m_shell.verbs; }
    device_context& context() { return m_pd.context(); }

protected:
    // The CQs of a QP to be made, or none (nulls: errno says why).
    struct queues {
        completion_queue* send = nullptr;
        completion_queue* receive = nullptr;
        explicit operator bool() const { return send != nullptr; }
    };
    // ibv_create_qp's checks, alike for both: shared receive queues are not emulated;
    // a device after a fatal error refuses every command (EIO); CQs of another
    // context, capabilities beyond the device's or a send queue of fewer than
    // \p min_send_wr WRs are EINVAL.
    static queues
    queues_for(protection_domain& pd, const ibv_qp_init_attr& attr, uint32_t min_send_wr)
    {
        if (attr.srq != nullptr)
            fail_unemulated("shared receive queues (ibv_qp_init_attr.srq)");
        device_context& context = pd.context();
        if (context.device().faults().fatal()) {
            errno = EIO;
            return {};
        }
        completion_queue* send_cq = completion_queue::from(attr.send_cq);
        completion_queue* receive_cq = completion_queue::from(attr.recv_cq);
        const ibv_qp_cap& cap = attr.cap;
        if (send_cq == nullptr || receive_cq == nullptr ||
            &send_cq->context() != &context || &receive_cq->context() != &context ||
            cap.max_send_wr < min_send_wr || cap.max_send_wr > device_limits::max_qp_wr ||
            cap.max_recv_wr > device_limits::max_qp_wr ||
            cap.max_send_sge > device_limits::max_sge ||
            cap.max_recv_sge > device_limits::max_sge ||
            cap.max_inline_data > device_limits::max_inline_data) {
            errno = EINVAL;
            return {};
        }
        return { send_cq, receive_cq };
    }

    // Made under the device context's control mutex: the PD, the context and the CQs
    // count it until detach_locked().
    queue_pair_core(protection_domain& pd,
                    completion_queue& send_cq,
                    completion_queue& receive_cq,
                    const ibv_qp_init_attr& attr,
                    uint32_t qp_num)
        : m_pd(pd),
          m_send_cq(send_cq),
          m_receive_cq(receive_cq),
          m_cap(attr.cap),
          m_signal_all(attr.sq_sig_all != 0),
          m_send(attr.cap.max_send_wr),
          m_receive(attr.cap.max_recv_wr)
    {
        ibv_qp& qp = m_shell.verbs;
        pd.adopt(qp.context, qp.pd, qp.handle);
        qp.qp_context = attr.qp_context;
        qp.send_cq = send_cq.verbs();
        qp.recv_cq = receive_cq.verbs();
        qp.qp_num = qp_num;
        qp.state = IBV_QPS_RESET;
        qp.qp_type = attr.qp_type;
        // Reserve now so posting never allocates.
        for (auto& slot : m_send.slots) {
            slot.sges.reserve(m_cap.max_send_sge);
            slot.inline_data.reserve(m_cap.max_inline_data);
        }
        for (auto& slot : m_receive.slots)
            slot.sges.reserve(m_cap.max_recv_sge);
        pd.live_queue_pairs++;
        pd.context().live_queue_pairs++;
        send_cq.attached_queue_pairs++;
        receive_cq.attached_queue_pairs++;
    }

    Derived* self() { return static_cast<Derived*>(this); }

    // destroy(), under the control mutex: its completions, its events and its counts go.
    void detach_locked()
    {
        m_send_cq.remove_entries_of(self());
        m_receive_cq.remove_entries_of(self());
        m_send_cq.attached_queue_pairs--;
        m_receive_cq.attached_queue_pairs--;
        m_pd.live_queue_pairs--;
        context().live_queue_pairs--;
        // Unread events about it die with it, as in the kernel.
        context().async_events().discard_events_about(verbs());
    }

    // A chain of WRs posted by \p queue (see post_chain()); \p doorbell then wakes
    // whoever takes them.
    template <typename Wr, typename Queue, typename Doorbell>
    int post(Wr* wr, Wr** bad_wr, Queue queue, Doorbell doorbell)
    {
        return post_chain(
            context().device().faults().fatal(), m_mutex, wr, bad_wr, queue, doorbell);
    }

    // ibv_post_recv: the chain into the receive ring.
    template <typename Doorbell>
    int post_receives(ibv_recv_wr* wr, ibv_recv_wr** bad_wr, Doorbell doorbell)
    {
        auto queue = [this](ibv_recv_wr*& wr, bool& flush) {
            return post_receive_chain(m_receive, wr, m_cap.max_recv_sge, m_state, flush);
        };
        return post(wr, bad_wr, queue, doorbell);
    }

    // ibv_post_send: each WR of the chain that the peer's \p accept takes (0, once it
    // has its slot from claim_send_locked() filled; else an errno) goes on the send ring.
    template <typename Accept, typename Doorbell>
    int
    post_sends(ibv_send_wr* wr, ibv_send_wr** bad_wr, Accept accept, Doorbell doorbell)
    {
        auto queue = [this, &accept](ibv_send_wr*& wr, bool& wake) {
            for (; wr != nullptr; wr = wr->next) {
                // IB spec: posting before RTS fails at once; in ERR WRs are accepted and
                // flushed.
                if (m_state == IBV_QPS_RESET || m_state == IBV_QPS_INIT ||
                    m_state == IBV_QPS_RTR)
                    return EINVAL;
                if (const int error = accept(*wr))
                    return error;
                m_send.posted++;
                wake = true;
            }
            return 0;
        };
        return post(wr, bad_wr, queue, doorbell);
    }

    // The slot for send WR \p wr, filled (its SGEs or inline data): 0, or an errno.
    int claim_send_locked(const ibv_send_wr& wr, SendSlot*& slot)
    {
        if (const int error = m_send.claim(wr.num_sge, m_cap.max_send_sge, ENOMEM, slot))
            return error;
        return fill_send_slot(*slot, wr, m_cap.max_inline_data, m_signal_all);
    }

    // ibv_modify_qp's move to \p target, once the peer has checked it: RESET forgets
    // the work outstanding (the peer's reset_locked()), ERR flushes it (its
    // enter_error_locked()). \p label names the QP in the trace.
    void move_to_locked(ibv_qp_state target, const char* label)
    {
        trace("%s 0x%x: %s -> %s",
              label,
              m_shell.verbs.qp_num,
              qp_state_name(m_state),
              qp_state_name(target));
        if (target == IBV_QPS_RESET)
            self()->reset_locked();
        else if (target == IBV_QPS_ERR)
            self()->enter_error_locked("ibv_modify_qp to IBV_QPS_ERR");
        else
            m_state = target;
        m_shell.verbs.state = target; // rdma-core mirrors the state it set
    }

    // To RESET: everything outstanding is forgotten without completions, as on
    // hardware, and work from before can no longer complete (the generation).
    void reset_queues_locked()
    {
        m_state = IBV_QPS_RESET;
        m_generation++;
        m_send.forget_outstanding();
        m_receive.forget_outstanding();
        m_send_cq.remove_entries_of(self());
        m_receive_cq.remove_entries_of(self());
    }

    // ibv_query_qp of a QP of \p type: \p own fills what only the peer knows, first,
    // then the state, the capabilities and the attributes it was made with; under the
    // lock.
    template <typename Own>
    int answer_query(ibv_qp_attr& attr,
                     ibv_qp_init_attr& init_attr,
                     ibv_qp_type type,
                     Own own)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        own(attr);
        attr.qp_state = m_state;
        attr.cur_qp_state = m_state;
        attr.cap = m_cap;
        init_attr = ibv_qp_init_attr{};
        init_attr.qp_context = m_shell.verbs.qp_context;
        init_attr.send_cq = m_send_cq.verbs();
        init_attr.recv_cq = m_receive_cq.verbs();
        init_attr.cap = m_cap;
        init_attr.qp_type = type;
        init_attr.sq_sig_all = m_signal_all ? 1 : 0;
        return 0;
    }

    // The end of ibv_destroy_qp, once it is detached: \p label names it in the trace.
    int destroyed(const char* label)
    {
        trace("%s 0x%x destroyed", label, m_shell.verbs.qp_num);
        delete self();
        return 0;
    }

    // Pushes \p entry onto \p cq (an error is traced, after \p label, "QP" or "RC QP").
    // False when the CQ overran: the caller moves the QP to ERR.
    bool push_completion_locked(completion_queue& cq,
                                completion_entry& entry,
                                const char* label)
    {
        entry.wc.qp_num = m_shell.verbs.qp_num;
        const ibv_wc_status status = entry.wc.status;
        if (status != IBV_WC_SUCCESS && status != IBV_WC_WR_FLUSH_ERR)
            trace("%s 0x%x: wr_id %llu completed with %s",
                  label,
                  m_shell.verbs.qp_num,
                  static_cast<unsigned long long>(entry.wc.wr_id),
                  ibv_wc_status_str(status));
        return cq.push(entry);
    }

    synchronised_shell<ibv_qp, Derived> m_shell{ static_cast<Derived*>(this) };
    protection_domain& m_pd;
    completion_queue& m_send_cq;
    completion_queue& m_receive_cq;
    const ibv_qp_cap m_cap;
    const bool m_signal_all;

    std::mutex m_mutex; // state, queues, and what each peer adds
    ibv_qp_state m_state = IBV_QPS_RESET;
    uint64_t m_generation = 0; // changes on reset: work from before is void

    work_ring<SendSlot> m_send;
    work_ring<receive_slot> m_receive;
};

} // namespace spead_emu

#endif
