/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Destroy order: an object still used by another cannot be destroyed (EBUSY).
#include "verbs_test_support.h"

using namespace verbs_test;

TEST(DestroyOrder, QpWithAFlowIsBusy)
{
    raw_queue_pair made = make_raw_queue_pair();
    flow_ptr flow = steer_loopback_udp(made.qp.get(), 7401);
    EXPECT_EQ(ibv_destroy_qp(made.qp.get()), EBUSY);
    EXPECT_EQ(ibv_destroy_flow(flow.release()), 0);
    EXPECT_EQ(ibv_destroy_qp(made.qp.release()), 0);
}

TEST(DestroyOrder, PdWithAMemoryRegionIsBusy)
{
    context_ptr context = open_loopback_device();
    pd_ptr pd(ibv_alloc_pd(context.get()));
    registered_buffer buffer = register_buffer(pd.get(), 4096);
    EXPECT_EQ(ibv_dealloc_pd(pd.get()), EBUSY);
    EXPECT_EQ(ibv_dereg_mr(buffer.mr.release()), 0);
    EXPECT_EQ(ibv_dealloc_pd(pd.release()), 0);
}

TEST(DestroyOrder, PdWithAQpIsBusy)
{
    raw_queue_pair made = make_raw_queue_pair();
    EXPECT_EQ(ibv_dealloc_pd(made.pd.get()), EBUSY);
}

TEST(DestroyOrder, CqUsedByAQpIsBusy)
{
    raw_queue_pair made = make_raw_queue_pair();
    EXPECT_EQ(ibv_destroy_cq(made.send_cq.get()), EBUSY);
    EXPECT_EQ(ibv_destroy_cq(made.receive_cq.get()), EBUSY);
    EXPECT_EQ(ibv_destroy_qp(made.qp.release()), 0);
    EXPECT_EQ(ibv_destroy_cq(made.send_cq.release()), 0);
}

TEST(DestroyOrder, ChannelUsedByACqIsBusy)
{
    context_ptr context = open_loopback_device();
    channel_ptr channel(ibv_create_comp_channel(context.get()));
    cq_ptr cq(ibv_create_cq(context.get(), 8, nullptr, channel.get(), 0));
    EXPECT_EQ(ibv_destroy_comp_channel(channel.get()), EBUSY);
    EXPECT_EQ(ibv_destroy_cq(cq.release()), 0);
    EXPECT_EQ(ibv_destroy_comp_channel(channel.release()), 0);
}

TEST(DestroyOrder, DeviceWithLiveObjectsIsBusy)
{
    context_ptr context = open_loopback_device();
    pd_ptr pd(ibv_alloc_pd(context.get()));
    EXPECT_EQ(ibv_close_device(context.get()), EBUSY);
    EXPECT_EQ(ibv_dealloc_pd(pd.release()), 0);
    EXPECT_EQ(ibv_close_device(context.release()), 0);
}

TEST(DestroyOrder, DeregisteredMemoryIsNoLongerUsable)
{
    raw_queue_pair made = make_raw_queue_pair();
    flow_ptr flow = steer_loopback_udp(made.qp.get(), 7402);
    bring_up(made.qp.get(), IBV_QPS_RTR);
    registered_buffer buffer = register_buffer(made.pd.get(), 1024);
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge()), 0);
    ASSERT_EQ(ibv_dereg_mr(buffer.mr.release()), 0) << "allowed while a WR names it";
    send_kernel_datagram("into freed keys", 7402);
    const auto completions = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(completions[0].status, IBV_WC_LOC_PROT_ERR);
}
