/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The RAW_PACKET QP state machine and what each state allows.
#include "verbs_test_support.h"

using namespace verbs_test;

TEST(QueuePairState, PostingAReceiveInResetFailsWithEinval)
{
    raw_queue_pair made = make_raw_queue_pair();
    registered_buffer buffer = register_buffer(made.pd.get(), 2048);
    ibv_sge sge = buffer.sge();
    ibv_recv_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    EXPECT_EQ(ibv_post_recv(made.qp.get(), &wr, &bad), EINVAL);
    EXPECT_EQ(bad, &wr);
    ASSERT_EQ(move_to_init(made.qp.get()), 0);
    EXPECT_EQ(ibv_post_recv(made.qp.get(), &wr, &bad), 0)
        << "receives may be posted in INIT";
}

TEST(QueuePairState, PostingASendBeforeRtsFailsWithEinval)
{
    raw_queue_pair made = make_raw_queue_pair();
    registered_buffer buffer = register_buffer(made.pd.get(), 128);
    ibv_sge sge = buffer.sge(0, 64);
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    EXPECT_EQ(ibv_post_send(made.qp.get(), &wr, &bad), EINVAL) << "RESET";
    EXPECT_EQ(bad, &wr);
    ASSERT_EQ(move_to_init(made.qp.get()), 0);
    EXPECT_EQ(ibv_post_send(made.qp.get(), &wr, &bad), EINVAL) << "INIT";
    ASSERT_EQ(move_to_rtr(made.qp.get()), 0);
    EXPECT_EQ(ibv_post_send(made.qp.get(), &wr, &bad), EINVAL) << "RTR";
}

TEST(QueuePairState, FramesAreReceivedOnlyInRtrOrRts)
{
    raw_queue_pair made = make_raw_queue_pair();
    registered_buffer buffer = register_buffer(made.pd.get(), 4096);
    flow_ptr flow = steer_loopback_udp(made.qp.get(), 7001);
    ASSERT_EQ(move_to_init(made.qp.get()), 0);
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge(0, 2048)), 0);
    ASSERT_EQ(post_one_receive(made.qp.get(), 2, buffer.sge(2048, 2048)), 0);

    send_kernel_datagram("while in INIT", 7001);
    EXPECT_TRUE(poll_completions(made.receive_cq.get(), 1, std::chrono::milliseconds(300))
                    .empty());
    spead_emu_counters counters{};
    ASSERT_EQ(emulator().query_qp_counters(made.qp.get(), &counters), 0);
    EXPECT_EQ(counters.rx_frames_dropped_qp_not_ready, 1u);

    ASSERT_EQ(move_to_rtr(made.qp.get()), 0);
    send_kernel_datagram("in RTR", 7001);
    const auto completions = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(completions[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(completions[0].wr_id, 1u) << "the frame dropped in INIT used no receive";
    EXPECT_EQ(
        std::string(reinterpret_cast<char*>(buffer.bytes.data()) + udp_frame_overhead,
                    completions[0].byte_len - udp_frame_overhead),
        "in RTR");
}

TEST(QueuePairState, TransitionsOutOfOrderFailWithEinval)
{
    raw_queue_pair made = make_raw_queue_pair();
    EXPECT_EQ(move_to_rtr(made.qp.get()), EINVAL) << "RESET -> RTR";
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    EXPECT_EQ(ibv_modify_qp(made.qp.get(), &attr, IBV_QP_STATE), EINVAL)
        << "RESET -> INIT needs the port";
    attr.port_num = 2;
    EXPECT_EQ(ibv_modify_qp(made.qp.get(), &attr, IBV_QP_STATE | IBV_QP_PORT), EINVAL)
        << "the device has one port";
    ASSERT_EQ(move_to_init(made.qp.get()), 0);
    EXPECT_EQ(move_to_rts(made.qp.get()), EINVAL) << "INIT -> RTS";
    attr = ibv_qp_attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.qkey = 1;
    EXPECT_EQ(ibv_modify_qp(made.qp.get(), &attr, IBV_QP_STATE | IBV_QP_QKEY), EINVAL)
        << "a raw packet QP takes no Q_Key";
    EXPECT_EQ(current_state(made.qp.get()), IBV_QPS_INIT);
}

TEST(QueuePairState, ErrorStateFlushesPostedReceivesInOrder)
{
    raw_queue_pair made = make_raw_queue_pair();
    registered_buffer buffer = register_buffer(made.pd.get(), 4096);
    bring_up(made.qp.get(), IBV_QPS_RTR);
    ASSERT_EQ(post_one_receive(made.qp.get(), 10, buffer.sge(0, 2048)), 0);
    ASSERT_EQ(post_one_receive(made.qp.get(), 11, buffer.sge(2048, 2048)), 0);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ASSERT_EQ(ibv_modify_qp(made.qp.get(), &attr, IBV_QP_STATE), 0);
    const auto completions = poll_completions(made.receive_cq.get(), 2);
    ASSERT_EQ(completions.size(), 2u);
    EXPECT_EQ(completions[0].wr_id, 10u);
    EXPECT_EQ(completions[0].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(completions[1].wr_id, 11u);
    EXPECT_EQ(completions[1].status, IBV_WC_WR_FLUSH_ERR);
}

TEST(QueuePairState, ResetForgetsOutstandingWorkWithoutCompletions)
{
    raw_queue_pair made = make_raw_queue_pair();
    registered_buffer buffer = register_buffer(made.pd.get(), 2048);
    bring_up(made.qp.get(), IBV_QPS_RTR);
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge()), 0);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RESET;
    ASSERT_EQ(ibv_modify_qp(made.qp.get(), &attr, IBV_QP_STATE), 0);
    EXPECT_TRUE(poll_completions(made.receive_cq.get(), 1, std::chrono::milliseconds(200))
                    .empty());
    EXPECT_EQ(current_state(made.qp.get()), IBV_QPS_RESET);
}
