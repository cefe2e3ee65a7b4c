/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// QPs on rdma_cm_ids: rdma_create_qp, rdma_destroy_qp and rdma_init_qp_attr, and the
// state walk librdmacm does with the public verbs API (INIT at creation, RTR and RTS with
// the peer's qpn, psn and IPv4-mapped GID from the handshake, ERR at disconnect).
#include "log.h"
#include "rdma_cm_id.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

namespace spead_emu {

namespace {

// librdmacm allocates one PD per device for ids whose QP is given none.
ibv_pd* default_pd(ibv_context* context)
{
    static std::mutex mutex;
    static auto* pds = new std::map<ibv_context*, ibv_pd*>;
    std::lock_guard<std::mutex> lock(mutex);
    ibv_pd*& pd = (*pds)[context];
    if (pd == nullptr)
        pd = ibv_alloc_pd(context);
    return pd;
}

// A CQ with its own completion channel, for librdmacm's ids given no CQ; 0 or -1.
int create_cq(rdma_cm_id* id, uint32_t depth, ibv_comp_channel*& channel, ibv_cq*& cq)
{
    channel = ibv_create_comp_channel(id->verbs);
    if (channel == nullptr)
        return -1;
    cq = ibv_create_cq(id->verbs, std::max<int>(depth, 1), id, channel, 0);
    return cq == nullptr ? -1 : 0;
}

// The send and receive CQs librdmacm makes when the application gives none;
// rdma_get_send_comp and rdma_get_recv_comp wait on their channels.
int create_cqs(rdma_cm_id* id, ibv_qp_init_attr& attr)
{
    if (attr.recv_cq == nullptr) {
        if (create_cq(id, attr.cap.max_recv_wr, id->recv_cq_channel, id->recv_cq) != 0)
            return -1;
        attr.recv_cq = id->recv_cq;
    }
    if (attr.send_cq == nullptr) {
        if (create_cq(id, attr.cap.max_send_wr, id->send_cq_channel, id->send_cq) != 0)
            return -1;
        attr.send_cq = id->send_cq;
    }
    return 0;
}

void destroy_cqs(rdma_cm_id* id)
{
    if (id->recv_cq != nullptr)
        ibv_destroy_cq(id->recv_cq);
    if (id->recv_cq_channel != nullptr)
        ibv_destroy_comp_channel(id->recv_cq_channel);
    if (id->send_cq != nullptr)
        ibv_destroy_cq(id->send_cq);
    if (id->send_cq_channel != nullptr)
        ibv_destroy_comp_channel(id->send_cq_channel);
    id->recv_cq = id->send_cq = nullptr;
    id->recv_cq_channel = id->send_cq_channel = nullptr;
}

// rdma_init_qp_attr with the id's mutex held (the handshake thread writes its state).
int init_qp_attr_locked(rdma_cm_id* id, ibv_qp_attr* qp_attr, int* qp_attr_mask)
{
    if (id == nullptr || qp_attr == nullptr || qp_attr_mask == nullptr ||
        id->verbs == nullptr) {
        errno = EINVAL;
        return -1;
    }
    const cm_id_shell* shell = shell_of(id);
    const ibv_qp_state state = qp_attr->qp_state;
    *qp_attr = ibv_qp_attr{};
    qp_attr->qp_state = state;
    switch (state) {
    case IBV_QPS_INIT:
        qp_attr->pkey_index = 0;
        qp_attr->port_num = id->port_num;
        qp_attr->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        *qp_attr_mask =
            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
        return 0;
    case IBV_QPS_RTR: {
        ibv_port_attr port{};
        if (ibv_query_port(id->verbs, id->port_num, &port) != 0)
            return -1;
        qp_attr->path_mtu = port.active_mtu;
        qp_attr->dest_qp_num = shell->peer.qp_num;
        qp_attr->rq_psn = shell->peer.psn;
        // What this side answers for the peer's RDMA reads: the peer's initiator depth.
        qp_attr->max_dest_rd_atomic = std::max<uint8_t>(shell->peer.initiator_depth, 1);
        qp_attr->min_rnr_timer = 12; // 0.64 ms, the kernel CM's default
        qp_attr->ah_attr.is_global = 1;
        qp_attr->ah_attr.grh.dgid = id->route.addr.addr.ibaddr.dgid;
        qp_attr->ah_attr.grh.sgid_index = source_gid_index(id);
        qp_attr->ah_attr.grh.hop_limit = 64;
        qp_attr->ah_attr.port_num = id->port_num;
        *qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                        IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
        return 0;
    }
    case IBV_QPS_RTS: {
        // The active side's REQ says the retry count for both; each side's own
        // parameters say its RNR retries and reads in flight.
        const bool active = shell->state == cm_state::connecting;
        qp_attr->timeout = 14; // 67 ms, the kernel CM's default for RoCE
        qp_attr->retry_cnt = active ? shell->local.retry_count : shell->peer.retry_count;
        qp_attr->rnr_retry = shell->local.rnr_retry_count;
        qp_attr->sq_psn = shell->local.psn;
        qp_attr->max_rd_atomic = std::max<uint8_t>(shell->local.initiator_depth, 1);
        *qp_attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                        IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
        return 0;
    }
    default:
        errno = EINVAL;
        return -1;
    }
}

// With the id's mutex held.
int modify_to(rdma_cm_id* id, ibv_qp_state state)
{
    ibv_qp_attr attr{};
    int mask = 0;
    attr.qp_state = state;
    if (init_qp_attr_locked(id, &attr, &mask) != 0)
        return -1;
    const int result = ibv_modify_qp(id->qp, &attr, mask);
    if (result != 0) {
        errno = result;
        return -1;
    }
    return 0;
}

} // namespace

int move_qp_to_rtr_and_rts(rdma_cm_id* id)
{
    std::lock_guard<std::mutex> lock(shell_of(id)->mutex);
    if (id->qp == nullptr)
        return 0; // the application walks its own QP
    if (modify_to(id, IBV_QPS_RTR) != 0 || modify_to(id, IBV_QPS_RTS) != 0) {
        warn("rdma_cm: QP %u could not go to RTR/RTS with peer QP %u: %s",
             id->qp->qp_num,
             shell_of(id)->peer.qp_num,
             strerror(errno));
        return -1;
    }
    return 0;
}

void move_qp_to_error(rdma_cm_id* id)
{
    std::lock_guard<std::mutex> lock(shell_of(id)->mutex);
    if (id->qp == nullptr)
        return;
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(id->qp, &attr, IBV_QP_STATE);
}

bool has_qp(cm_id_shell* shell)
{
    std::lock_guard<std::mutex> lock(shell->mutex);
    return shell->id.qp != nullptr;
}

} // namespace spead_emu

extern "C" {

int rdma_init_qp_attr(rdma_cm_id* id, ibv_qp_attr* qp_attr, int* qp_attr_mask)
{
    if (id == nullptr) {
        errno = EINVAL;
        return -1;
    }
    std::lock_guard<std::mutex> lock(spead_emu::shell_of(id)->mutex);
    return spead_emu::init_qp_attr_locked(id, qp_attr, qp_attr_mask);
}

int rdma_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr)
{
    if (id == nullptr || qp_init_attr == nullptr || id->verbs == nullptr) {
        errno = EINVAL; // the id has no device before its address is bound or resolved
        return -1;
    }
    if (pd == nullptr)
        pd = spead_emu::default_pd(id->verbs);
    if (pd == nullptr || pd->context != id->verbs) {
        errno = EINVAL;
        return -1;
    }
    ibv_qp_init_attr attr = *qp_init_attr;
    if (attr.qp_type == 0)
        attr.qp_type = id->qp_type;
    if (spead_emu::create_cqs(id, attr) != 0) {
        const int error = errno;
        spead_emu::destroy_cqs(id);
        errno = error;
        return -1;
    }
    ibv_qp* qp = ibv_create_qp(pd, &attr);
    if (qp == nullptr) {
        const int error = errno;
        spead_emu::destroy_cqs(id);
        errno = error;
        return -1;
    }
    int result;
    {
        std::lock_guard<std::mutex> lock(spead_emu::shell_of(id)->mutex);
        id->qp = qp;
        result = spead_emu::modify_to(id, IBV_QPS_INIT);
        if (result != 0)
            id->qp = nullptr;
    }
    if (result != 0) {
        const int error = errno;
        ibv_destroy_qp(qp);
        spead_emu::destroy_cqs(id);
        errno = error;
        return -1;
    }
    id->pd = pd;
    qp_init_attr->cap = attr.cap; // what the device granted, as librdmacm reports it
    return 0;
}

void rdma_destroy_qp(rdma_cm_id* id)
{
    if (id == nullptr)
        return;
    ibv_qp* qp;
    {
        // The handshake thread may be moving it to ERR (a DREP, a dead peer).
        std::lock_guard<std::mutex> lock(spead_emu::shell_of(id)->mutex);
        qp = std::exchange(id->qp, nullptr);
    }
    if (qp == nullptr)
        return;
    ibv_destroy_qp(qp);
    spead_emu::destroy_cqs(id);
}

} // extern "C"
