/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Verbs the emulator does not model abort, naming themselves: a test can never pass on
// behaviour nobody emulated.
#include "verbs_test_support.h"

using namespace verbs_test;

class Unemulated : public ::testing::Test
{
protected:
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(Unemulated, ExportedVerbAbortsNamingItself)
{
    context_ptr context = open_loopback_device();
    pd_ptr pd(ibv_alloc_pd(context.get()));
    ibv_srq_init_attr attr{};
    attr.attr.max_wr = 8;
    attr.attr.max_sge = 1;
    EXPECT_DEATH(ibv_create_srq(pd.get(), &attr), "ibv_create_srq@IBVERBS_1.1");
}

TEST_F(Unemulated, ExtendedContextOperationAbortsNamingItself)
{
    context_ptr context = open_loopback_device();
    ibv_cq_init_attr_ex attr{};
    attr.cqe = 8;
    EXPECT_DEATH(ibv_create_cq_ex(context.get(), &attr), "create_cq_ex");
}

TEST_F(Unemulated, QueuePairTypeOtherThanRawPacketAborts)
{
    context_ptr context = open_loopback_device();
    pd_ptr pd(ibv_alloc_pd(context.get()));
    cq_ptr cq(ibv_create_cq(context.get(), 8, nullptr, nullptr, 0));
    ibv_qp_init_attr attr = qp_init_attr(cq.get(), cq.get(), IBV_QPT_UD);
    EXPECT_DEATH(ibv_create_qp(pd.get(), &attr), "IBV_QPT_RAW_PACKET");
}
