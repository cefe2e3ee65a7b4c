/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Memory registration: every entry point verbs.h may route ibv_reg_mr to, and the NIC's
// translation of SGE addresses (I/O virtual addresses) into the registered memory.
#include "verbs_test_support.h"

#include <cstring>
#include <set>

using namespace verbs_test;

TEST(MemoryRegion, EveryRegistrationEntryPointGivesAUsableRegion)
{
    context_ptr context = open_loopback_device();
    pd_ptr pd(ibv_alloc_pd(context.get()));
    std::vector<uint8_t> memory(3 * 4096);
    // A constant access without optional flags: verbs.h calls ibv_reg_mr itself.
    mr_ptr plain(ibv_reg_mr(pd.get(), memory.data(), 4096, IBV_ACCESS_LOCAL_WRITE));
    // An optional-range flag: verbs.h routes the same call to ibv_reg_mr_iova2.
    mr_ptr relaxed(ibv_reg_mr(pd.get(),
                              memory.data() + 4096,
                              4096,
                              IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING));
    mr_ptr explicit_iova(
        ibv_reg_mr_iova2(pd.get(),
                         memory.data() + 8192,
                         4096,
                         reinterpret_cast<uintptr_t>(memory.data() + 8192),
                         IBV_ACCESS_LOCAL_WRITE));
    ASSERT_NE(plain, nullptr);
    ASSERT_NE(relaxed, nullptr);
    ASSERT_NE(explicit_iova, nullptr);
    EXPECT_EQ(plain->addr, memory.data());
    EXPECT_EQ(plain->length, 4096u);
    EXPECT_EQ(plain->pd, pd.get());
    EXPECT_EQ(plain->lkey, plain->rkey);
    const std::set<uint32_t> keys{ plain->lkey, relaxed->lkey, explicit_iova->lkey };
    EXPECT_EQ(keys.size(), 3u) << "every region has its own key";
}

TEST(MemoryRegion, SgeAddressesAreIoVirtualAddressesOfTheRegion)
{
    raw_queue_pair made = make_loopback_receiver(7601);
    std::vector<uint8_t> memory(4096, 0);
    const uint64_t iova = 0x10000000;
    mr_ptr mr(ibv_reg_mr_iova(
        made.pd.get(), memory.data(), memory.size(), iova, IBV_ACCESS_LOCAL_WRITE));
    ASSERT_NE(mr, nullptr);
    ibv_sge sge{ iova + 512, 1024, mr->lkey };
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, sge), 0);
    send_kernel_datagram("at iova + 512", 7601);
    const auto completions = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    ASSERT_EQ(completions[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(std::string(
                  reinterpret_cast<char*>(memory.data()) + 512 + udp_frame_overhead, 13),
              "at iova + 512");
    EXPECT_EQ(memory[0], 0) << "nothing written before the SGE";
}
