/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Receive steering: flows, posted receives, what gets dropped and what completes how.
#include "verbs_test_support.h"

#include <arpa/inet.h>

#include <cstring>
#include <thread>

using namespace verbs_test;

namespace {

std::string payload_of(const registered_buffer& buffer, size_t offset, const ibv_wc& wc)
{
    return std::string(reinterpret_cast<const char*>(buffer.bytes.data()) + offset +
                           udp_frame_overhead,
                       wc.byte_len - udp_frame_overhead);
}

} // namespace

TEST(Receive, FrameWithNoReceivePostedIsDroppedAndCounted)
{
    raw_queue_pair made = make_loopback_receiver(7101);
    registered_buffer buffer = register_buffer(made.pd.get(), 2048);
    for (int i = 0; i < 3; i++)
        send_kernel_datagram("nobody posted for me", 7101);
    spead_emu_counters counters{};
    for (int tries = 0; tries < 300 && counters.rx_frames_dropped_no_receive < 3;
         tries++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_EQ(emulator().query_qp_counters(made.qp.get(), &counters), 0);
    }
    EXPECT_EQ(counters.rx_frames_dropped_no_receive, 3u);
    EXPECT_EQ(counters.rx_frames_delivered, 0u);
    spead_emu_counters port{};
    ASSERT_EQ(emulator().query_port_counters(made.context.get(), &port), 0);
    EXPECT_EQ(port.rx_frames_dropped_no_receive, 3u);

    // A NIC does not keep dropped frames: the next receive gets the next frame.
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge()), 0);
    send_kernel_datagram("after posting", 7101);
    const auto completions = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(payload_of(buffer, 0, completions[0]), "after posting");
}

TEST(Receive, FramesFillTheOldestPostedReceiveFirst)
{
    raw_queue_pair made = make_loopback_receiver(7102);
    registered_buffer buffer = register_buffer(made.pd.get(), 3 * 1024);
    for (uint64_t i = 0; i < 3; i++)
        ASSERT_EQ(post_one_receive(made.qp.get(), 100 + i, buffer.sge(i * 1024, 1024)),
                  0);
    send_kernel_datagram("first", 7102);
    send_kernel_datagram("second", 7102);
    send_kernel_datagram("third", 7102);
    const auto completions = poll_completions(made.receive_cq.get(), 3);
    ASSERT_EQ(completions.size(), 3u);
    const char* expected[] = { "first", "second", "third" };
    for (size_t i = 0; i < 3; i++) {
        EXPECT_EQ(completions[i].status, IBV_WC_SUCCESS);
        EXPECT_EQ(completions[i].opcode, IBV_WC_RECV);
        EXPECT_EQ(completions[i].wr_id, 100 + i);
        EXPECT_EQ(completions[i].qp_num, made.qp->qp_num);
        EXPECT_EQ(completions[i].byte_len, udp_frame_overhead + strlen(expected[i]));
        EXPECT_EQ(payload_of(buffer, i * 1024, completions[i]), expected[i]);
    }
}

TEST(Receive, FrameLargerThanTheReceiveBufferCompletesWithLengthError)
{
    raw_queue_pair made = make_loopback_receiver(7103);
    registered_buffer buffer = register_buffer(made.pd.get(), 4096);
    ASSERT_EQ(post_one_receive(made.qp.get(), 7, buffer.sge(0, 64)), 0);
    ASSERT_EQ(post_one_receive(made.qp.get(), 8, buffer.sge(64, 64)), 0);
    send_kernel_datagram(std::string(200, 'x'), 7103);
    const auto completions = poll_completions(made.receive_cq.get(), 2);
    ASSERT_EQ(completions.size(), 2u);
    EXPECT_EQ(completions[0].wr_id, 7u);
    EXPECT_EQ(completions[0].status, IBV_WC_LOC_LEN_ERR);
    EXPECT_EQ(completions[1].wr_id, 8u);
    EXPECT_EQ(completions[1].status, IBV_WC_WR_FLUSH_ERR) << "the error broke the QP";
    EXPECT_EQ(current_state(made.qp.get()), IBV_QPS_ERR);
}

TEST(Receive, ReceiveIntoMemoryOfAnotherLkeyCompletesWithProtectionError)
{
    raw_queue_pair made = make_loopback_receiver(7104);
    registered_buffer buffer = register_buffer(made.pd.get(), 2048);
    ibv_sge wrong = buffer.sge();
    wrong.lkey += 1;
    ASSERT_EQ(post_one_receive(made.qp.get(), 9, wrong), 0)
        << "keys are checked by the NIC";
    send_kernel_datagram("protected", 7104);
    const auto completions = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(completions[0].status, IBV_WC_LOC_PROT_ERR);
    EXPECT_EQ(current_state(made.qp.get()), IBV_QPS_ERR);
}

TEST(Receive, ReceiveBufferWithoutLocalWriteCompletesWithProtectionError)
{
    raw_queue_pair made = make_loopback_receiver(7105);
    registered_buffer read_only = register_buffer(made.pd.get(), 2048, 0);
    ASSERT_EQ(post_one_receive(made.qp.get(), 3, read_only.sge()), 0);
    send_kernel_datagram("may not write", 7105);
    const auto completions = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(completions[0].status, IBV_WC_LOC_PROT_ERR);
}

TEST(Receive, OnlyFramesMatchingAFlowAreSteeredToTheQp)
{
    raw_queue_pair made = make_loopback_receiver(7106);
    registered_buffer buffer = register_buffer(made.pd.get(), 2 * 1024);
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge(0, 1024)), 0);
    ASSERT_EQ(post_one_receive(made.qp.get(), 2, buffer.sge(1024, 1024)), 0);
    send_kernel_datagram("other port", 7107);
    send_kernel_datagram("our port", 7106);
    const auto completions =
        poll_completions(made.receive_cq.get(), 2, std::chrono::milliseconds(500));
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(payload_of(buffer, 0, completions[0]), "our port");
    spead_emu_counters counters{};
    ASSERT_EQ(emulator().query_qp_counters(made.qp.get(), &counters), 0);
    EXPECT_EQ(counters.rx_frames_dropped_no_receive, 0u)
        << "unsteered frames are not ours";
}

TEST(Receive, MaskedOutDestinationAddressMatchesAnyAddress)
{
    raw_queue_pair made = make_raw_queue_pair();
    registered_buffer buffer = register_buffer(made.pd.get(), 2 * 1024);
    const uint8_t loopback_mac[6] = {};
    udp_flow_rule rule = make_udp_flow_rule(loopback_mac, htonl(INADDR_ANY), 7108);
    EXPECT_EQ(rule.ipv4.mask.dst_ip, 0u);
    flow_ptr flow(ibv_create_flow(made.qp.get(), &rule.attr));
    ASSERT_NE(flow, nullptr);
    bring_up(made.qp.get(), IBV_QPS_RTR);
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge(0, 1024)), 0);
    ASSERT_EQ(post_one_receive(made.qp.get(), 2, buffer.sge(1024, 1024)), 0);
    send_kernel_datagram("to .1", 7108, "127.0.0.1");
    send_kernel_datagram("to .2", 7108, "127.0.0.2");
    const auto completions = poll_completions(made.receive_cq.get(), 2);
    ASSERT_EQ(completions.size(), 2u);
    EXPECT_EQ(payload_of(buffer, 0, completions[0]), "to .1");
    EXPECT_EQ(payload_of(buffer, 1024, completions[1]), "to .2");
}

TEST(Receive, CompletionSaysWhenIpAndUdpChecksumsAreGood)
{
    raw_queue_pair made = make_loopback_receiver(7109);
    registered_buffer buffer = register_buffer(made.pd.get(), 1024);
    ASSERT_EQ(post_one_receive(made.qp.get(), 1, buffer.sge()), 0);
    send_kernel_datagram("checked", 7109);
    const auto completions = poll_completions(made.receive_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_TRUE(completions[0].wc_flags & IBV_WC_IP_CSUM_OK);
}
