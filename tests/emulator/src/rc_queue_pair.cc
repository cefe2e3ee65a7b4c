/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "rc_queue_pair.h"

#include "completion_queue.h"
#include "device.h"
#include "device_context.h"
#include "enum_names.h"
#include "gid_table.h"
#include "log.h"
#include "protection_domain.h"
#include "rc_requester.h"
#include "rc_responder.h"
#include "rc_transitions.h"
#include "rc_wire.h"
#include "work_posting.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace spead_emu {
namespace {

const char* state_name(ibv_qp_state state)
{
    static const char* const names[] = { "RESET", "INIT", "RTR", "RTS",
                                         "SQD",   "SQE",  "ERR" };
    return enum_name(names, state, "UNKNOWN");
}

void advance_to(std::atomic<uint64_t>& released, uint64_t next)
{
    uint64_t current = released.load();
    while (next > current && !released.compare_exchange_weak(current, next)) {
    }
}

ibv_wc_opcode send_completion_opcode(ibv_wr_opcode opcode)
{
    if (opcode == IBV_WR_RDMA_READ)
        return IBV_WC_RDMA_READ;
    return opcode == IBV_WR_RDMA_WRITE || opcode == IBV_WR_RDMA_WRITE_WITH_IMM
               ? IBV_WC_RDMA_WRITE
               : IBV_WC_SEND;
}

} // namespace

rc_queue_pair::rc_queue_pair(protection_domain& pd,
                             completion_queue& send_cq,
                             completion_queue& receive_cq,
                             const ibv_qp_init_attr& attr,
                             int listening_fd,
                             uint16_t port)
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
    qp.qp_num = rc_wire::qp_num_of_port(port);
    qp.state = IBV_QPS_RESET;
    qp.qp_type = IBV_QPT_RC;
    // Reserve now so posting never allocates.
    for (auto& slot : m_send.slots) {
        slot.sges.reserve(m_cap.max_send_sge);
        slot.inline_data.reserve(m_cap.max_inline_data);
    }
    for (auto& slot : m_receive.slots)
        slot.sges.reserve(m_cap.max_recv_sge);
    m_attr.cap = m_cap;
    m_requester = std::make_unique<rc_requester>(*this);
    m_responder = std::make_unique<rc_responder>(*this, listening_fd);
}

rc_queue_pair::~rc_queue_pair() = default;

rc_queue_pair* rc_queue_pair::from(ibv_qp* qp)
{
    return object_shell<ibv_qp, rc_queue_pair>::owner_of(qp);
}

device_context& rc_queue_pair::context() { return m_pd.context(); }

ibv_qp* rc_queue_pair::create(protection_domain& pd, ibv_qp_init_attr& attr)
{
    if (attr.srq != nullptr)
        fail_unemulated("shared receive queues (ibv_qp_init_attr.srq)");
    device_context& context = pd.context();
    if (context.device().faults().fatal()) {
        errno = EIO;
        return nullptr;
    }
    completion_queue* send_cq = completion_queue::from(attr.send_cq);
    completion_queue* receive_cq = completion_queue::from(attr.recv_cq);
    ibv_qp_cap& cap = attr.cap;
    if (send_cq == nullptr || receive_cq == nullptr || &send_cq->context() != &context ||
        &receive_cq->context() != &context || cap.max_send_wr == 0 ||
        cap.max_send_wr > device_limits::max_qp_wr ||
        cap.max_recv_wr > device_limits::max_qp_wr ||
        cap.max_send_sge > device_limits::max_sge ||
        cap.max_recv_sge > device_limits::max_sge ||
        cap.max_inline_data > device_limits::max_inline_data) {
        errno = EINVAL;
        return nullptr;
    }
    uint16_t port = 0;
    const int listening = rc_wire::listen_on_ephemeral_port(port);
    if (listening < 0) {
        warn("ibv_create_qp(IBV_QPT_RC): the RC wire cannot listen on a TCP port (%s)",
             strerror(errno));
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(context.control_mutex());
    auto* qp = new rc_queue_pair(pd, *send_cq, *receive_cq, attr, listening, port);
    pd.live_queue_pairs++;
    context.live_queue_pairs++;
    send_cq->attached_queue_pairs++;
    receive_cq->attached_queue_pairs++;
    qp->m_requester->start();
    qp->m_responder->start();
    trace("RC QP 0x%x on %s (TCP port %u): send %u x %u SGE, receive %u x %u SGE, "
          "inline %u",
          qp->verbs()->qp_num,
          context.device().netdev().c_str(),
          port,
          cap.max_send_wr,
          cap.max_send_sge,
          cap.max_recv_wr,
          cap.max_recv_sge,
          cap.max_inline_data);
    return qp->verbs(); // attr.cap holds what was granted: what was asked for
}

int rc_queue_pair::modify(const ibv_qp_attr& attr, int mask)
{
    if (context().device().faults().fatal())
        return EIO;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (mask & IBV_QP_RATE_LIMIT)
            return EOPNOTSUPP;
        if ((mask & IBV_QP_CUR_STATE) && attr.cur_qp_state != m_state)
            return EINVAL;
        const ibv_qp_state target = (mask & IBV_QP_STATE) ? attr.qp_state : m_state;
        if (!rc_transition_valid(m_state, target, mask)) {
            trace("RC QP 0x%x: %s -> %s with mask 0x%x refused (EINVAL)",
                  m_shell.verbs.qp_num,
                  state_name(m_state),
                  state_name(target),
                  mask);
            return EINVAL;
        }
        if (const int error = apply_locked(attr, mask, target))
            return error;
        trace("RC QP 0x%x: %s -> %s",
              m_shell.verbs.qp_num,
              state_name(m_state),
              state_name(target));
        if (target == IBV_QPS_RESET)
            reset_locked();
        else if (target == IBV_QPS_ERR)
            enter_error_locked("ibv_modify_qp to IBV_QPS_ERR", IBV_EVENT_QP_FATAL, false);
        else
            m_state = target;
        m_shell.verbs.state = target;
    }
    wake_threads();
    return 0;
}

int rc_queue_pair::apply_locked(const ibv_qp_attr& attr, int mask, ibv_qp_state target)
{
    if (const int error = rc_attributes_valid(attr, mask))
        return error;
    if (mask & IBV_QP_AV) {
        const ibv_global_route& grh = attr.ah_attr.grh;
        in_addr peer{};
        if (!attr.ah_attr.is_global || !ipv4_of_gid(grh.dgid, peer)) {
            warn("ibv_modify_qp(RTR) of RC QP 0x%x: ah_attr needs is_global and an "
                 "IPv4-mapped dgid (::ffff:a.b.c.d, GID index 0 of a RoCE v2 port); the "
                 "emulated port is RoCE v2 and routes by IPv4 only; EINVAL",
                 m_shell.verbs.qp_num);
            return EINVAL;
        }
        m_peer_address = peer;
    }
    if ((mask & IBV_QP_DEST_QPN) && !rc_wire::is_rc_qp_num(attr.dest_qp_num)) {
        warn("ibv_modify_qp(RTR) of RC QP 0x%x: dest_qp_num 0x%x is no emulated RC QP "
             "(they are 0x8xxxxx); EINVAL",
             m_shell.verbs.qp_num,
             attr.dest_qp_num);
        return EINVAL;
    }
    const uint32_t known = m_attr.qp_access_flags;
    m_attr.qp_access_flags = (mask & IBV_QP_ACCESS_FLAGS) ? attr.qp_access_flags : known;
    if (mask & IBV_QP_PKEY_INDEX)
        m_attr.pkey_index = attr.pkey_index;
    if (mask & IBV_QP_PORT)
        m_attr.port_num = attr.port_num;
    if (mask & IBV_QP_AV)
        m_attr.ah_attr = attr.ah_attr;
    if (mask & IBV_QP_PATH_MTU)
        m_attr.path_mtu = attr.path_mtu;
    if (mask & IBV_QP_DEST_QPN)
        m_attr.dest_qp_num = attr.dest_qp_num;
    if (mask & IBV_QP_RQ_PSN) {
        m_attr.rq_psn = attr.rq_psn & rc_wire::psn_mask;
        m_expected_receive_psn = m_attr.rq_psn;
    }
    if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
        m_attr.max_dest_rd_atomic = attr.max_dest_rd_atomic;
    if (mask & IBV_QP_MIN_RNR_TIMER)
        m_attr.min_rnr_timer = attr.min_rnr_timer;
    if (mask & IBV_QP_TIMEOUT)
        m_attr.timeout = attr.timeout;
    if (mask & IBV_QP_RETRY_CNT)
        m_attr.retry_cnt = attr.retry_cnt;
    if (mask & IBV_QP_RNR_RETRY)
        m_attr.rnr_retry = attr.rnr_retry;
    if (mask & IBV_QP_SQ_PSN) {
        m_attr.sq_psn = attr.sq_psn & rc_wire::psn_mask;
        m_next_send_psn = m_attr.sq_psn;
    }
    if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
        m_attr.max_rd_atomic = attr.max_rd_atomic;
    (void)target;
    return 0;
}

int rc_queue_pair::query(ibv_qp_attr& attr, ibv_qp_init_attr& init_attr)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    attr = m_attr;
    attr.qp_state = m_state;
    attr.cur_qp_state = m_state;
    attr.cap = m_cap;
    attr.sq_psn = m_next_send_psn;
    attr.rq_psn = m_expected_receive_psn;
    init_attr = ibv_qp_init_attr{};
    init_attr.qp_context = m_shell.verbs.qp_context;
    init_attr.send_cq = m_send_cq.verbs();
    init_attr.recv_cq = m_receive_cq.verbs();
    init_attr.cap = m_cap;
    init_attr.qp_type = IBV_QPT_RC;
    init_attr.sq_sig_all = m_signal_all ? 1 : 0;
    return 0;
}

int rc_queue_pair::destroy()
{
    device_context& context = this->context();
    std::lock_guard<std::mutex> control(context.control_mutex());
    m_requester->stop();
    m_responder->stop();
    m_send_cq.remove_entries_of(this);
    m_receive_cq.remove_entries_of(this);
    m_send_cq.attached_queue_pairs--;
    m_receive_cq.attached_queue_pairs--;
    m_pd.live_queue_pairs--;
    context.live_queue_pairs--;
    context.async_events().discard_events_about(verbs());
    trace("RC QP 0x%x destroyed", m_shell.verbs.qp_num);
    delete this;
    return 0;
}

int rc_queue_pair::post_send(ibv_send_wr* wr, ibv_send_wr** bad_wr)
{
    auto queue = [this](ibv_send_wr*& wr, bool& wake) {
        for (; wr != nullptr; wr = wr->next) {
            // Posting before RTS fails at once; in ERR WRs are accepted and flushed.
            if (m_state == IBV_QPS_RESET || m_state == IBV_QPS_INIT ||
                m_state == IBV_QPS_RTR) {
                return EINVAL;
            }
            switch (wr->opcode) {
            case IBV_WR_SEND:
            case IBV_WR_SEND_WITH_IMM:
            case IBV_WR_RDMA_WRITE:
            case IBV_WR_RDMA_WRITE_WITH_IMM:
            case IBV_WR_RDMA_READ:
                break;
            default:
                fail_unemulated("ibv_post_send opcode %d on an RC QP (only SEND, "
                                "SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM and "
                                "RDMA_READ are emulated; no atomics or invalidation)",
                                wr->opcode);
            }
            if (wr->opcode == IBV_WR_RDMA_READ && (wr->send_flags & IBV_SEND_INLINE)) {
                return EINVAL; // a read has nowhere to put inline data
            }
            rc_send_slot* claimed = nullptr;
            if (const int error =
                    m_send.claim(wr->num_sge, m_cap.max_send_sge, ENOMEM, claimed))
                return error;
            rc_send_slot& slot = *claimed;
            if (const int error =
                    fill_send_slot(slot, *wr, m_cap.max_inline_data, m_signal_all))
                return error;
            slot.opcode = wr->opcode;
            slot.imm = wr->imm_data;
            slot.remote_addr = wr->wr.rdma.remote_addr;
            slot.rkey = wr->wr.rdma.rkey;
            slot.psn = m_next_send_psn;
            m_next_send_psn = rc_wire::next_psn(m_next_send_psn);
            m_send.posted++;
            wake = true;
        }
        return 0;
    };
    return post_chain(
        context().device().faults().fatal(), m_mutex, wr, bad_wr, queue, [this] {
            m_requester->ring_doorbell();
        });
}

int rc_queue_pair::post_receive(ibv_recv_wr* wr, ibv_recv_wr** bad_wr)
{
    auto queue = [this](ibv_recv_wr*& wr, bool& flush) {
        return post_receive_chain(m_receive, wr, m_cap.max_recv_sge, m_state, flush);
    };
    return post_chain(
        context().device().faults().fatal(), m_mutex, wr, bad_wr, queue, [this] {
            m_requester->ring_doorbell();
        });
}

void rc_queue_pair::release_slots_through(bool send_queue, uint64_t index)
{
    advance_to(send_queue ? m_send.released : m_receive.released, index + 1);
}

void rc_queue_pair::enter_error_locked(const char* reason,
                                       ibv_event_type event,
                                       bool post_event)
{
    if (m_state == IBV_QPS_ERR)
        return;
    trace("RC QP 0x%x: %s -> ERR: %s", m_shell.verbs.qp_num, state_name(m_state), reason);
    m_state = IBV_QPS_ERR;
    if (post_event)
        context().async_events().post(event, verbs());
    m_requester->ring_doorbell(); // it flushes what is outstanding
    m_responder->ring_doorbell();
}

void rc_queue_pair::reset_locked()
{
    m_state = IBV_QPS_RESET;
    m_generation++;
    // Everything outstanding is forgotten without completions, as on hardware.
    m_send.forget_outstanding();
    m_send_acknowledged = m_send.posted;
    m_receive.forget_outstanding();
    m_send_cq.remove_entries_of(this);
    m_receive_cq.remove_entries_of(this);
    const ibv_qp_cap cap = m_attr.cap;
    m_attr = ibv_qp_attr{};
    m_attr.cap = cap;
}

void rc_queue_pair::flush_locked()
{
    while (m_send_acknowledged < m_send.posted) {
        const uint64_t index = m_send_acknowledged++;
        complete_send_locked(m_send.at(index), index, IBV_WC_WR_FLUSH_ERR);
    }
    m_send.taken = m_send.posted;
    while (m_receive.taken < m_receive.posted) {
        const uint64_t index = m_receive.taken++;
        complete_receive_locked(index, IBV_WC_WR_FLUSH_ERR);
    }
}

void rc_queue_pair::complete_send_locked(const rc_send_slot& slot,
                                         uint64_t index,
                                         ibv_wc_status status)
{
    completion_entry entry{};
    entry.wc.wr_id = slot.wr_id;
    entry.wc.status = status;
    entry.wc.opcode = send_completion_opcode(slot.opcode);
    entry.is_send = true;
    entry.work_queue_index = index;
    complete_locked(m_send_cq, entry);
}

void rc_queue_pair::complete_receive_locked(uint64_t index,
                                            ibv_wc_status status,
                                            ibv_wc_opcode opcode,
                                            uint32_t byte_len,
                                            const uint32_t* imm)
{
    completion_entry entry{};
    entry.wc.wr_id = m_receive.at(index).wr_id;
    entry.wc.status = status;
    entry.wc.opcode = opcode;
    entry.wc.byte_len = byte_len;
    entry.wc.src_qp = m_attr.dest_qp_num;
    if (imm != nullptr) {
        entry.wc.wc_flags = IBV_WC_WITH_IMM;
        entry.wc.imm_data = *imm;
    }
    entry.work_queue_index = index;
    complete_locked(m_receive_cq, entry);
}

void rc_queue_pair::complete_locked(completion_queue& cq, completion_entry& entry)
{
    entry.wc.qp_num = m_shell.verbs.qp_num;
    entry.rc_qp = this;
    const ibv_wc_status status = entry.wc.status;
    if (status != IBV_WC_SUCCESS && status != IBV_WC_WR_FLUSH_ERR)
        trace("RC QP 0x%x: wr_id %llu completed with %s",
              m_shell.verbs.qp_num,
              static_cast<unsigned long long>(entry.wc.wr_id),
              ibv_wc_status_str(status));
    // A completion that cannot be delivered is reported by an async event.
    if (!cq.push(entry))
        enter_error_locked("its completion queue overran", IBV_EVENT_QP_FATAL, true);
}

void rc_queue_pair::wake_threads()
{
    m_requester->ring_doorbell();
    m_responder->ring_doorbell();
}

} // namespace spead_emu
