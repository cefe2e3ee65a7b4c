/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Sending: gather from several memory regions, checksum offload, send queue accounting
// with selective signalling, and the errors a NIC reports.
#include "verbs_test_support.h"

#include <arpa/inet.h>

#include <cstring>
#include <thread>

using namespace verbs_test;

namespace {

// A header slot in one MR and the payload in another, as a zero-copy sender does.
struct two_part_frame {
    registered_buffer header;
    registered_buffer payload;
    ibv_sge sges[2];
};

two_part_frame make_two_part_frame(ibv_pd* pd, uint16_t port, const std::string& payload)
{
    two_part_frame frame;
    const std::vector<uint8_t> whole = make_loopback_udp_frame(port, payload);
    frame.header = register_buffer(pd, udp_frame_overhead);
    frame.payload = register_buffer(pd, payload.size());
    memcpy(frame.header.bytes.data(), whole.data(), udp_frame_overhead);
    memcpy(frame.payload.bytes.data(), payload.data(), payload.size());
    frame.sges[0] = frame.header.sge();
    frame.sges[1] = frame.payload.sge();
    return frame;
}

ibv_send_wr send_wr(uint64_t wr_id, ibv_sge* sges, int count, unsigned flags)
{
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = sges;
    wr.num_sge = count;
    wr.send_flags = flags;
    return wr;
}

int post(ibv_qp* qp, ibv_send_wr wr)
{
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp, &wr, &bad);
}

uint16_t load_be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

// A sender at RTS whose send queue has four slots.
raw_queue_pair four_slot_sender()
{
    queue_pair_options options;
    options.send_wr = 4;
    raw_queue_pair sender = make_raw_queue_pair(options);
    bring_up(sender.qp.get(), IBV_QPS_RTS);
    return sender;
}

} // namespace

TEST(Send, FrameGatheredFromTwoMemoryRegionsReachesAKernelSocket)
{
    raw_queue_pair sender = make_raw_queue_pair();
    bring_up(sender.qp.get(), IBV_QPS_RTS);
    kernel_udp_receiver receiver(7201);
    two_part_frame frame =
        make_two_part_frame(sender.pd.get(), 7201, "zero-copy payload");
    ASSERT_NE(frame.header.mr->lkey, frame.payload.mr->lkey);
    // Checksums are left to the NIC: the kernel drops the frame unless both are filled.
    ASSERT_EQ(post(sender.qp.get(),
                   send_wr(5, frame.sges, 2, IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM)),
              0);
    const auto completions = poll_completions(sender.send_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(completions[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(completions[0].opcode, IBV_WC_SEND);
    EXPECT_EQ(completions[0].wr_id, 5u);
    std::string received;
    ASSERT_TRUE(receiver.receive(received));
    EXPECT_EQ(received, "zero-copy payload");
}

TEST(Send, IpChecksumFlagMakesTheNicFillTheIpv4HeaderChecksum)
{
    raw_queue_pair sender = make_raw_queue_pair();
    raw_queue_pair capture = make_loopback_receiver(7202);
    registered_buffer captured = register_buffer(capture.pd.get(), 2048);
    bring_up(sender.qp.get(), IBV_QPS_RTS);
    ASSERT_EQ(post_one_receive(capture.qp.get(), 1, captured.sge(0, 1024)), 0);
    ASSERT_EQ(post_one_receive(capture.qp.get(), 2, captured.sge(1024, 1024)), 0);

    two_part_frame offloaded = make_two_part_frame(sender.pd.get(), 7202, "offloaded");
    two_part_frame as_is = make_two_part_frame(sender.pd.get(), 7202, "left alone");
    ASSERT_EQ(post(sender.qp.get(), send_wr(1, offloaded.sges, 2, IBV_SEND_IP_CSUM)), 0);
    ASSERT_EQ(post(sender.qp.get(), send_wr(2, as_is.sges, 2, IBV_SEND_SIGNALED)), 0);
    ASSERT_EQ(poll_completions(capture.receive_cq.get(), 2).size(), 2u);

    const uint8_t* with = captured.bytes.data() + 14;
    const uint8_t* without = captured.bytes.data() + 1024 + 14;
    // The checksum of an IPv4 header that includes a correct checksum is zero.
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += load_be16(with + i);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    EXPECT_NE(load_be16(with + 10), 0);
    EXPECT_EQ(sum, 0xffffu);
    EXPECT_EQ(load_be16(without + 10), 0)
        << "without the flag the frame goes out as built";
    // Nothing else in the header changed.
    EXPECT_EQ(memcmp(with, offloaded.header.bytes.data() + 14, 10), 0);
    EXPECT_EQ(memcmp(with + 12, offloaded.header.bytes.data() + 26, 8), 0);
    // And the registered memory itself is untouched: the NIC edits its copy.
    EXPECT_EQ(load_be16(offloaded.header.bytes.data() + 24), 0);
}

TEST(Send, SendQueueFillsUpWhenNothingIsSignalled)
{
    raw_queue_pair sender = four_slot_sender();
    two_part_frame frame = make_two_part_frame(sender.pd.get(), 7203, "unsignalled");
    for (uint64_t i = 0; i < 4; i++)
        ASSERT_EQ(post(sender.qp.get(), send_wr(i, frame.sges, 2, IBV_SEND_IP_CSUM)), 0);
    // Even once all four are on the wire, their slots stay taken: only polling a
    // completion at or after them gives them back.
    spead_emu_counters counters{};
    for (int tries = 0; tries < 300 && counters.tx_frames_sent < 4; tries++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_EQ(emulator().query_qp_counters(sender.qp.get(), &counters), 0);
    }
    ASSERT_EQ(counters.tx_frames_sent, 4u);
    ibv_send_wr fifth = send_wr(4, frame.sges, 2, IBV_SEND_SIGNALED);
    ibv_send_wr* bad = nullptr;
    EXPECT_EQ(ibv_post_send(sender.qp.get(), &fifth, &bad), ENOMEM);
    EXPECT_EQ(bad, &fifth);
}

TEST(Send, PollingASignalledCompletionFreesTheSlotsBeforeIt)
{
    raw_queue_pair sender = four_slot_sender();
    two_part_frame frame = make_two_part_frame(sender.pd.get(), 7204, "batch");
    // A batch of four with only the last signalled, as a sender does.
    for (uint64_t i = 0; i < 4; i++)
        ASSERT_EQ(post(sender.qp.get(),
                       send_wr(i, frame.sges, 2, i == 3 ? IBV_SEND_SIGNALED : 0)),
                  0);
    EXPECT_EQ(post(sender.qp.get(), send_wr(4, frame.sges, 2, 0)), ENOMEM);
    const auto completions = poll_completions(sender.send_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(completions[0].wr_id, 3u) << "unsignalled WRs complete silently";
    for (uint64_t i = 0; i < 4; i++)
        EXPECT_EQ(post(sender.qp.get(), send_wr(10 + i, frame.sges, 2, 0)), 0);
}

TEST(Send, WrongLkeyCompletesWithProtectionErrorAndBreaksTheQp)
{
    raw_queue_pair sender = make_raw_queue_pair();
    bring_up(sender.qp.get(), IBV_QPS_RTS);
    two_part_frame frame = make_two_part_frame(sender.pd.get(), 7205, "bad key");
    ibv_sge wrong[2] = { frame.sges[0], frame.sges[1] };
    wrong[1].lkey = frame.sges[1].lkey ^ 0x100;
    // Unsignalled, yet an error always completes.
    ASSERT_EQ(post(sender.qp.get(), send_wr(21, wrong, 2, 0)), 0);
    auto completions = poll_completions(sender.send_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(completions[0].wr_id, 21u);
    EXPECT_EQ(completions[0].status, IBV_WC_LOC_PROT_ERR);
    EXPECT_EQ(current_state(sender.qp.get()), IBV_QPS_ERR);

    ASSERT_EQ(post(sender.qp.get(), send_wr(22, frame.sges, 2, 0)), 0)
        << "an errored QP accepts work and flushes it";
    completions = poll_completions(sender.send_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(completions[0].wr_id, 22u);
    EXPECT_EQ(completions[0].status, IBV_WC_WR_FLUSH_ERR);
}

TEST(Send, RangeOutsideItsMemoryRegionCompletesWithProtectionError)
{
    raw_queue_pair sender = make_raw_queue_pair();
    bring_up(sender.qp.get(), IBV_QPS_RTS);
    two_part_frame frame = make_two_part_frame(sender.pd.get(), 7206, "overrun");
    ibv_sge beyond[2] = { frame.sges[0], frame.sges[1] };
    beyond[1].length += 1;
    ASSERT_EQ(post(sender.qp.get(), send_wr(31, beyond, 2, IBV_SEND_SIGNALED)), 0);
    const auto completions = poll_completions(sender.send_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(completions[0].status, IBV_WC_LOC_PROT_ERR);
}

TEST(Send, FrameLongerThanTheMtuCompletesWithLengthError)
{
    set_loopback_mtu(1500);
    raw_queue_pair sender = make_raw_queue_pair();
    bring_up(sender.qp.get(), IBV_QPS_RTS);
    two_part_frame frame =
        make_two_part_frame(sender.pd.get(), 7207, std::string(2000, 'j'));
    ASSERT_EQ(post(sender.qp.get(), send_wr(41, frame.sges, 2, IBV_SEND_SIGNALED)), 0);
    const auto completions = poll_completions(sender.send_cq.get(), 1);
    set_loopback_mtu(65536);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(completions[0].status, IBV_WC_LOC_LEN_ERR);
}

TEST(Send, InlineDataIsCopiedWhenPosted)
{
    raw_queue_pair capture = make_loopback_receiver(7208);
    registered_buffer captured = register_buffer(capture.pd.get(), 1024);
    ASSERT_EQ(post_one_receive(capture.qp.get(), 1, captured.sge()), 0);

    queue_pair_options inline_sends;
    inline_sends.send_wr = 4;
    inline_sends.send_sge = 1;
    inline_sends.inline_data = 256;
    raw_queue_pair sender = make_raw_queue_pair(inline_sends);
    ASSERT_NE(sender.qp, nullptr);
    bring_up(sender.qp.get(), IBV_QPS_RTS);
    std::vector<uint8_t> frame = make_loopback_udp_frame(7208, "inline");
    ibv_sge sge{ reinterpret_cast<uintptr_t>(frame.data()),
                 static_cast<uint32_t>(frame.size()),
                 0 };
    ASSERT_EQ(
        post(sender.qp.get(), send_wr(1, &sge, 1, IBV_SEND_INLINE | IBV_SEND_IP_CSUM)),
        0);
    memset(frame.data() + udp_frame_overhead, '!', 6); // reusable at once
    const auto completions = poll_completions(capture.receive_cq.get(), 1);
    ASSERT_EQ(completions.size(), 1u);
    EXPECT_EQ(std::string(
                  reinterpret_cast<char*>(captured.bytes.data()) + udp_frame_overhead, 6),
              "inline");
}
