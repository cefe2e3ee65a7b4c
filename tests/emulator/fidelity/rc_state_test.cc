/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The RC QP state machine: RESET -> INIT -> RTR -> RTS with exactly the attribute masks
// ibv_modify_qp(3) requires, and what each state allows.
#include "rc_test_support.h"

using namespace verbs_test;

namespace {

ibv_qp_state state_of(ibv_qp* qp)
{
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    EXPECT_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), 0);
    return attr.qp_state;
}

} // namespace

TEST(RcState, EachTransitionNeedsEveryRequiredAttribute)
{
    rc_endpoint endpoint = make_rc_endpoint();
    ibv_qp* qp = endpoint.qp.get();
    ASSERT_NE(qp, nullptr);
    ibv_qp_attr init = init_attributes();
    for (int missing : { IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_ACCESS_FLAGS })
        EXPECT_EQ(ibv_modify_qp(qp, &init, init_mask & ~missing), EINVAL) << missing;
    EXPECT_EQ(ibv_modify_qp(qp, &init, init_mask | IBV_QP_SQ_PSN), EINVAL)
        << "an attribute RESET->INIT does not take";
    ASSERT_EQ(ibv_modify_qp(qp, &init, init_mask), 0);
    EXPECT_EQ(state_of(qp), IBV_QPS_INIT);

    ibv_qp_attr rtr = rtr_attributes(loopback_gid(qp->context), qp->qp_num, 7);
    for (int missing : { IBV_QP_AV,
                         IBV_QP_PATH_MTU,
                         IBV_QP_DEST_QPN,
                         IBV_QP_RQ_PSN,
                         IBV_QP_MAX_DEST_RD_ATOMIC,
                         IBV_QP_MIN_RNR_TIMER })
        EXPECT_EQ(ibv_modify_qp(qp, &rtr, rtr_mask & ~missing), EINVAL) << missing;
    EXPECT_EQ(ibv_modify_qp(qp, &rtr, rtr_mask | IBV_QP_TIMEOUT), EINVAL);
    ASSERT_EQ(ibv_modify_qp(qp, &rtr, rtr_mask), 0);
    EXPECT_EQ(state_of(qp), IBV_QPS_RTR);

    ibv_qp_attr rts = rts_attributes(9);
    for (int missing : { IBV_QP_TIMEOUT,
                         IBV_QP_RETRY_CNT,
                         IBV_QP_RNR_RETRY,
                         IBV_QP_SQ_PSN,
                         IBV_QP_MAX_QP_RD_ATOMIC })
        EXPECT_EQ(ibv_modify_qp(qp, &rts, rts_mask & ~missing), EINVAL) << missing;
    EXPECT_EQ(ibv_modify_qp(qp, &rts, rts_mask | IBV_QP_DEST_QPN), EINVAL);
    ASSERT_EQ(ibv_modify_qp(qp, &rts, rts_mask | IBV_QP_MIN_RNR_TIMER), 0)
        << "MIN_RNR_TIMER is optional in RTR->RTS";
    EXPECT_EQ(state_of(qp), IBV_QPS_RTS);

    ibv_qp_attr again{};
    again.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
    EXPECT_EQ(ibv_modify_qp(qp, &again, IBV_QP_ACCESS_FLAGS), 0) << "RTS->RTS";
    EXPECT_EQ(ibv_modify_qp(qp, &again, IBV_QP_ACCESS_FLAGS | IBV_QP_SQ_PSN), EINVAL);
}

TEST(RcState, SkippingAStateOrBadValuesFailWithEinval)
{
    rc_endpoint endpoint = make_rc_endpoint();
    ibv_qp* qp = endpoint.qp.get();
    ASSERT_NE(qp, nullptr);
    ibv_qp_attr rtr = rtr_attributes(loopback_gid(qp->context), qp->qp_num, 7);
    EXPECT_EQ(ibv_modify_qp(qp, &rtr, rtr_mask), EINVAL) << "RESET->RTR";
    ibv_qp_attr init = init_attributes();
    init.port_num = 2;
    EXPECT_EQ(ibv_modify_qp(qp, &init, init_mask), EINVAL) << "no port 2";
    init = init_attributes();
    ASSERT_EQ(ibv_modify_qp(qp, &init, init_mask), 0);
    ibv_qp_attr rts = rts_attributes(9);
    EXPECT_EQ(ibv_modify_qp(qp, &rts, rts_mask), EINVAL) << "INIT->RTS";
    ibv_qp_attr lid_routed = rtr;
    lid_routed.ah_attr.is_global = 0;
    EXPECT_EQ(ibv_modify_qp(qp, &lid_routed, rtr_mask), EINVAL)
        << "RoCE needs the GRH (a GID), not a LID";
    ASSERT_EQ(ibv_modify_qp(qp, &rtr, rtr_mask), 0);
    rts.retry_cnt = 8;
    EXPECT_EQ(ibv_modify_qp(qp, &rts, rts_mask), EINVAL) << "retry_cnt above 7";
}

TEST(RcState, QueryReportsTheAttributesSet)
{
    rc_endpoint endpoint = make_rc_endpoint();
    ibv_qp* qp = endpoint.qp.get();
    ASSERT_NE(qp, nullptr);
    rc_options options;
    options.timeout = 14;
    options.retry_cnt = 6;
    options.rnr_retry = 5;
    options.min_rnr_timer = 12;
    connect_to(qp, 0x800123, options);
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    ASSERT_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_TIMEOUT, &init),
              0);
    EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
    EXPECT_EQ(attr.dest_qp_num, 0x800123u);
    EXPECT_EQ(attr.timeout, 14);
    EXPECT_EQ(attr.retry_cnt, 6);
    EXPECT_EQ(attr.rnr_retry, 5);
    EXPECT_EQ(attr.min_rnr_timer, 12);
    EXPECT_EQ(attr.sq_psn, 0x123u);
    EXPECT_EQ(attr.rq_psn, 0x123u);
    EXPECT_EQ(attr.path_mtu, IBV_MTU_1024);
    EXPECT_EQ(attr.qp_access_flags,
              static_cast<unsigned>(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
    EXPECT_EQ(attr.ah_attr.is_global, 1);
    EXPECT_EQ(init.qp_type, IBV_QPT_RC);
}

TEST(RcState, SendsNeedRtsAndAnErroredQpCanBeResetAndReused)
{
    rc_endpoint endpoint = make_rc_endpoint();
    ibv_qp* qp = endpoint.qp.get();
    ASSERT_NE(qp, nullptr);
    registered_buffer buffer = register_buffer(endpoint.pd.get(), 64);
    EXPECT_EQ(post_one_send(qp, 1, IBV_WR_SEND, { buffer.sge() }), EINVAL) << "RESET";
    EXPECT_EQ(post_one_receive(qp, 1, buffer.sge()), EINVAL) << "RESET";
    ibv_qp_attr init = init_attributes();
    ASSERT_EQ(ibv_modify_qp(qp, &init, init_mask), 0);
    EXPECT_EQ(post_one_receive(qp, 1, buffer.sge()), 0) << "receives from INIT on";
    EXPECT_EQ(post_one_send(qp, 1, IBV_WR_SEND, { buffer.sge() }), EINVAL) << "INIT";

    ibv_qp_attr error{};
    error.qp_state = IBV_QPS_ERR;
    ASSERT_EQ(ibv_modify_qp(qp, &error, IBV_QP_STATE), 0);
    const auto flushed = poll_completions(endpoint.receive_cq.get(), 1);
    ASSERT_EQ(flushed.size(), 1u);
    EXPECT_EQ(flushed[0].status, IBV_WC_WR_FLUSH_ERR);

    ibv_qp_attr reset{};
    reset.qp_state = IBV_QPS_RESET;
    ASSERT_EQ(ibv_modify_qp(qp, &reset, IBV_QP_STATE), 0);
    EXPECT_EQ(state_of(qp), IBV_QPS_RESET);
    EXPECT_EQ(ibv_modify_qp(qp, &init, init_mask), 0);
}
