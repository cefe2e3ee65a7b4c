/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Optional hardware switched off or resized through the environment (see device.h):
// devices without flow counters, without port hw_counters, with a given number of
// completion vectors. Each test runs as its own ctest with its variable set.
#include "verbs_test_support.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

using namespace verbs_test;

namespace {

#define REQUIRE_ENVIRONMENT(name, value)                                           \
    do {                                                                           \
        const char* set = getenv(name);                                            \
        ASSERT_TRUE(set != nullptr && std::string(set) == (value))                 \
            << "run with " name "=" value " (tests/emulator/CMakeLists.txt does)"; \
    } while (0)

} // namespace

TEST(WithoutFlowCounters, CreatingCountersFailsWithEopnotsupp)
{
    REQUIRE_ENVIRONMENT("SPEAD_EMU_FLOW_COUNTERS", "0");
    context_ptr context = open_loopback_device();
    ibv_counters_init_attr init{};
    errno = 0;
    EXPECT_EQ(ibv_create_counters(context.get(), &init), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST(WithoutHwCounters, IbdevPathLeadsToNoPortCounters)
{
    REQUIRE_ENVIRONMENT("SPEAD_EMU_HW_COUNTERS", "0");
    context_ptr context = open_loopback_device();
    EXPECT_STREQ(context->device->ibdev_path, "/sys/class/infiniband/emu_lo");
    std::ifstream counter(std::string(context->device->ibdev_path) +
                          "/ports/1/hw_counters/out_of_buffer");
    EXPECT_FALSE(counter.good());
}

TEST(CompVectors, TheDeviceHasAsManyAsConfigured)
{
    REQUIRE_ENVIRONMENT("SPEAD_EMU_COMP_VECTORS", "4");
    context_ptr context = open_loopback_device();
    EXPECT_EQ(context->num_comp_vectors, 4);
    cq_ptr last(ibv_create_cq(context.get(), 8, nullptr, nullptr, 3));
    EXPECT_NE(last, nullptr);
    errno = 0;
    EXPECT_EQ(ibv_create_cq(context.get(), 8, nullptr, nullptr, 4), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

TEST(WithoutIpChecksumOffload, NotAdvertisedAndNotDone)
{
    REQUIRE_ENVIRONMENT("SPEAD_EMU_IP_CSUM", "0");
    context_ptr context = open_loopback_device();
    const ibv_device_attr_ex attr = query_device_ex(context.get());
    EXPECT_FALSE(attr.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM);
    EXPECT_FALSE(attr.device_cap_flags_ex & IBV_DEVICE_RAW_IP_CSUM);
    EXPECT_FALSE(attr.orig_attr.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM);

    // Asked anyway, the NIC sends the headers as built: checksum fields stay 0.
    raw_queue_pair sender = make_raw_queue_pair();
    raw_queue_pair capture = make_loopback_receiver(7210);
    registered_buffer captured = register_buffer(capture.pd.get(), 2048);
    bring_up(sender.qp.get(), IBV_QPS_RTS);
    ASSERT_EQ(post_one_receive(capture.qp.get(), 1, captured.sge(0, 2048)), 0);
    const std::vector<uint8_t> frame = make_loopback_udp_frame(7210, "as built");
    registered_buffer out = register_buffer(sender.pd.get(), frame.size());
    memcpy(out.bytes.data(), frame.data(), frame.size());
    ibv_sge sge = out.sge();
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM;
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(sender.qp.get(), &wr, &bad), 0);
    ASSERT_EQ(poll_completions(capture.receive_cq.get(), 1).size(), 1u);
    const uint8_t* ip = captured.bytes.data() + 14;
    EXPECT_EQ(ip[10] << 8 | ip[11], 0) << "IPv4 header checksum";
    EXPECT_EQ(ip[26] << 8 | ip[27], 0) << "UDP checksum";
}

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    install_private_loopback_environment();
    return RUN_ALL_TESTS();
}
