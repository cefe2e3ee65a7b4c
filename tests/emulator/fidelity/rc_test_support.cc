/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "rc_test_support.h"

#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <cstring>

namespace verbs_test {

rc_endpoint make_rc_endpoint(const rc_options& options)
{
    rc_endpoint made;
    make_queue_pair_parts(made,
                          256,
                          false,
                          IBV_QPT_RC,
                          { options.send_wr,
                            options.receive_wr,
                            options.sge,
                            options.sge,
                            options.inline_data },
                          options.signal_all);
    return made;
}

ibv_qp_attr init_attributes(const rc_options& options)
{
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = 1;
    attr.qp_access_flags = options.access;
    return attr;
}

ibv_qp_attr rtr_attributes(const ibv_gid& dgid,
                           uint32_t dest_qp_num,
                           uint32_t rq_psn,
                           const rc_options& options)
{
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = IBV_MTU_1024;
    attr.dest_qp_num = dest_qp_num;
    attr.rq_psn = rq_psn;
    attr.max_dest_rd_atomic = 1;
    attr.min_rnr_timer = options.min_rnr_timer;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = dgid;
    attr.ah_attr.grh.hop_limit = 1;
    attr.ah_attr.grh.sgid_index = 0;
    attr.ah_attr.port_num = 1;
    return attr;
}

ibv_qp_attr rts_attributes(uint32_t sq_psn, const rc_options& options)
{
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = options.timeout;
    attr.retry_cnt = options.retry_cnt;
    attr.rnr_retry = options.rnr_retry;
    attr.sq_psn = sq_psn;
    attr.max_rd_atomic = 1;
    return attr;
}

ibv_gid loopback_gid(ibv_context* context)
{
    ibv_gid gid{};
    EXPECT_EQ(ibv_query_gid(context, 1, 0, &gid), 0);
    return gid;
}

void connect_to(ibv_qp* qp, uint32_t peer_qp_num, const rc_options& options)
{
    ibv_qp_attr init = init_attributes(options);
    ASSERT_EQ(ibv_modify_qp(qp, &init, init_mask), 0);
    ibv_qp_attr rtr =
        rtr_attributes(loopback_gid(qp->context), peer_qp_num, 0x123, options);
    ASSERT_EQ(ibv_modify_qp(qp, &rtr, rtr_mask), 0);
    ibv_qp_attr rts = rts_attributes(0x123, options);
    ASSERT_EQ(ibv_modify_qp(qp, &rts, rts_mask), 0);
}

rc_pair make_connected_pair(const rc_options& a_options, const rc_options& b_options)
{
    rc_pair pair{ make_rc_endpoint(a_options), make_rc_endpoint(b_options) };
    if (pair.a.qp && pair.b.qp) {
        connect_to(pair.a.qp.get(), pair.b.qp->qp_num, a_options);
        connect_to(pair.b.qp.get(), pair.a.qp->qp_num, b_options);
    }
    return pair;
}

int post_one_send(ibv_qp* qp,
                  uint64_t wr_id,
                  ibv_wr_opcode opcode,
                  std::vector<ibv_sge> sges,
                  int flags,
                  uint64_t remote_addr,
                  uint32_t rkey,
                  uint32_t imm)
{
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.opcode = opcode;
    wr.sg_list = sges.data();
    wr.num_sge = static_cast<int>(sges.size());
    wr.send_flags = flags;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = rkey;
    wr.imm_data = imm;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp, &wr, &bad);
}

bool next_async_event(ibv_context* context,
                      ibv_async_event& event,
                      std::chrono::milliseconds limit)
{
    pollfd fd{ context->async_fd, POLLIN, 0 };
    if (poll(&fd, 1, static_cast<int>(limit.count())) != 1)
        return false;
    return ibv_get_async_event(context, &event) == 0;
}

} // namespace verbs_test
