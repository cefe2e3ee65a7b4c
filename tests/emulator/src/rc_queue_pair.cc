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
    : queue_pair_core(pd, send_cq, receive_cq, attr, rc_wire::qp_num_of_port(port))
{
    m_attr.cap = m_cap;
    m_requester = std::make_unique<rc_requester>(*this);
    m_responder = std::make_unique<rc_responder>(*this, listening_fd);
}

rc_queue_pair::~rc_queue_pair() = default;

rc_queue_pair* rc_queue_pair::from(ibv_qp* qp)
{
    return object_shell<ibv_qp, rc_queue_pair>::owner_of(qp);
}

ibv_qp* rc_queue_pair::create(protection_domain& pd, ibv_qp_init_attr& attr)
{
    const queues cqs = queues_for(pd, attr, 1);
    if (!cqs)
        return nullptr;
    device_context& context = pd.context();
    const ibv_qp_cap& cap = attr.cap;
    uint16_t port = 0;
    const int listening = rc_wire::listen_on_ephemeral_port(port);
    if (listening < 0) {
        warn("ibv_create_qp(IBV_QPT_RC): the RC wire cannot listen on a TCP port (%s)",
             strerror(errno));
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(context.control_mutex());
    auto* qp = new rc_queue_pair(pd, *cqs.send, *cqs.receive, attr, listening, port);
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
                  qp_state_name(m_state),
                  qp_state_name(target),
                  mask);
            return EINVAL;
        }
        if (const int error = apply_locked(attr, mask, target))
            return error;
        move_to_locked(target, "RC QP");
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
    return answer_query(attr, init_attr, IBV_QPT_RC, [this](ibv_qp_attr& own) {
        own = m_attr;
        own.sq_psn = m_next_send_psn;
        own.rq_psn = m_expected_receive_psn;
    });
}

int rc_queue_pair::destroy()
{
    device_context& context = this->context();
    std::lock_guard<std::mutex> control(context.control_mutex());
    m_requester->stop();
    m_responder->stop();
    detach_locked();
    return destroyed("RC QP");
}

int rc_queue_pair::post_send(ibv_send_wr* wr, ibv_send_wr** bad_wr)
{
    const auto accept = [this](const ibv_send_wr& wr) {
        switch (wr.opcode) {
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
                            wr.opcode);
        }
        if (wr.opcode == IBV_WR_RDMA_READ && (wr.send_flags & IBV_SEND_INLINE))
            return EINVAL; // a read has nowhere to put inline data
        rc_send_slot* slot = nullptr;
        if (const int error = claim_send_locked(wr, slot))
            return error;
        slot->opcode = wr.opcode;
        slot->imm = wr.imm_data;
        slot->remote_addr = wr.wr.rdma.remote_addr;
        slot->rkey = wr.wr.rdma.rkey;
        slot->psn = m_next_send_psn;
        m_next_send_psn = rc_wire::next_psn(m_next_send_psn);
        return 0;
    };
    return post_sends(wr, bad_wr, accept, [this] { m_requester->ring_doorbell(); });
}

int rc_queue_pair::post_receive(ibv_recv_wr* wr, ibv_recv_wr** bad_wr)
{
    return post_receives(wr, bad_wr, [this] { m_requester->ring_doorbell(); });
}

void rc_queue_pair::release_slots_through(bool send_queue, uint64_t index)
{
    if (send_queue)
        m_send.release_through(index);
    else
        m_receive.release_through(index);
}

void rc_queue_pair::enter_error_locked(const char* reason,
                                       ibv_event_type event,
                                       bool post_event)
{
    if (m_state == IBV_QPS_ERR)
        return;
    trace("RC QP 0x%x: %s -> ERR: %s",
          m_shell.verbs.qp_num,
          qp_state_name(m_state),
          reason);
    m_state = IBV_QPS_ERR;
    if (post_event)
        context().async_events().post(event, verbs());
    m_requester->ring_doorbell(); // it flushes what is outstanding
    m_responder->ring_doorbell();
}

void rc_queue_pair::reset_locked()
{
    reset_queues_locked();
    m_send_acknowledged = m_send.posted;
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
    entry.rc_qp = this;
    // A completion that cannot be delivered is reported by an async event.
    if (!push_completion_locked(cq, entry, "RC QP"))
        enter_error_locked("its completion queue overran", IBV_EVENT_QP_FATAL, true);
}

void rc_queue_pair::wake_threads()
{
    m_requester->ring_doorbell();
    m_responder->ring_doorbell();
}

} // namespace spead_emu
