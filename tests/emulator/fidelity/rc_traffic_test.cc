/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Two connected RC QPs over the loopback wire: SEND/RECV with SGE lists, immediates,
// RDMA writes, inline data, selective signalling and ordering.
#include "rc_test_support.h"

#include <arpa/inet.h>

#include <numeric>

using namespace verbs_test;

namespace {

constexpr int remote_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

void fill(registered_buffer& buffer, uint8_t first)
{
    std::iota(buffer.bytes.begin(), buffer.bytes.end(), first);
}

} // namespace

TEST(RcTraffic, ASendLandsInThePostedReceiveAcrossItsSges)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer source = register_buffer(pair.a.pd.get(), 300);
    fill(source, 1);
    registered_buffer target = register_buffer(pair.b.pd.get(), 512);
    // The receive WR has two SGEs: 100 bytes, then 400.
    ibv_sge sges[2] = { target.sge(0, 100), target.sge(100, 400) };
    ibv_recv_wr receive{};
    receive.wr_id = 77;
    receive.sg_list = sges;
    receive.num_sge = 2;
    ibv_recv_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_recv(pair.b.qp.get(), &receive, &bad), 0);
    // The send gathers two SGEs too: 200 then 100 bytes.
    ASSERT_EQ(post_one_send(pair.a.qp.get(),
                            5,
                            IBV_WR_SEND,
                            { source.sge(0, 200), source.sge(200, 100) }),
              0);

    const auto received = poll_completions(pair.b.receive_cq.get(), 1);
    ASSERT_EQ(received.size(), 1u);
    EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(received[0].opcode, IBV_WC_RECV);
    EXPECT_EQ(received[0].byte_len, 300u);
    EXPECT_EQ(received[0].wr_id, 77u);
    EXPECT_EQ(received[0].qp_num, pair.b.qp->qp_num);
    EXPECT_EQ(received[0].src_qp, pair.a.qp->qp_num);
    EXPECT_FALSE(received[0].wc_flags & IBV_WC_WITH_IMM);
    EXPECT_TRUE(
        std::equal(source.bytes.begin(), source.bytes.end(), target.bytes.begin()));

    const auto sent = poll_completions(pair.a.send_cq.get(), 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(sent[0].opcode, IBV_WC_SEND);
    EXPECT_EQ(sent[0].wr_id, 5u);
}

TEST(RcTraffic, SendWithImmCarriesTheImmediate)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer source = register_buffer(pair.a.pd.get(), 16);
    registered_buffer target = register_buffer(pair.b.pd.get(), 16);
    ASSERT_EQ(post_one_receive(pair.b.qp.get(), 1, target.sge()), 0);
    ASSERT_EQ(post_one_send(pair.a.qp.get(),
                            2,
                            IBV_WR_SEND_WITH_IMM,
                            { source.sge() },
                            IBV_SEND_SIGNALED,
                            0,
                            0,
                            htonl(0xdeadbeef)),
              0);
    const auto received = poll_completions(pair.b.receive_cq.get(), 1);
    ASSERT_EQ(received.size(), 1u);
    EXPECT_EQ(received[0].opcode, IBV_WC_RECV);
    EXPECT_TRUE(received[0].wc_flags & IBV_WC_WITH_IMM);
    EXPECT_EQ(ntohl(received[0].imm_data), 0xdeadbeefu);
    EXPECT_EQ(received[0].byte_len, 16u);
}

TEST(RcTraffic, RdmaWriteLandsWithoutConsumingAReceive)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer source = register_buffer(pair.a.pd.get(), 4096);
    fill(source, 9);
    registered_buffer target = register_buffer(pair.b.pd.get(), 8192, remote_access);
    ASSERT_EQ(post_one_receive(pair.b.qp.get(), 1, target.sge(0, 16)), 0);
    const uint64_t where = reinterpret_cast<uintptr_t>(target.bytes.data()) + 1000;
    ASSERT_EQ(post_one_send(pair.a.qp.get(),
                            3,
                            IBV_WR_RDMA_WRITE,
                            { source.sge() },
                            IBV_SEND_SIGNALED,
                            where,
                            target.mr->rkey),
              0);
    const auto sent = poll_completions(pair.a.send_cq.get(), 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(sent[0].opcode, IBV_WC_RDMA_WRITE);
    // Acknowledged means written.
    EXPECT_TRUE(std::equal(
        source.bytes.begin(), source.bytes.end(), target.bytes.begin() + 1000));
    EXPECT_TRUE(
        poll_completions(pair.b.receive_cq.get(), 1, std::chrono::milliseconds(200))
            .empty())
        << "a plain RDMA write consumes no receive";
}

TEST(RcTraffic, RdmaWriteWithImmConsumesAReceiveAndReportsTheWrite)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer source = register_buffer(pair.a.pd.get(), 1024);
    fill(source, 3);
    registered_buffer target = register_buffer(pair.b.pd.get(), 1024, remote_access);
    ASSERT_EQ(post_one_receive(pair.b.qp.get(), 44, target.sge(0, 0)), 0);
    ASSERT_EQ(post_one_send(pair.a.qp.get(),
                            4,
                            IBV_WR_RDMA_WRITE_WITH_IMM,
                            { source.sge(0, 600) },
                            IBV_SEND_SIGNALED,
                            reinterpret_cast<uintptr_t>(target.bytes.data()),
                            target.mr->rkey,
                            htonl(600)),
              0);
    const auto received = poll_completions(pair.b.receive_cq.get(), 1);
    ASSERT_EQ(received.size(), 1u);
    EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(received[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
    EXPECT_EQ(received[0].wr_id, 44u);
    EXPECT_EQ(received[0].byte_len, 600u);
    EXPECT_TRUE(received[0].wc_flags & IBV_WC_WITH_IMM);
    EXPECT_EQ(ntohl(received[0].imm_data), 600u);
    EXPECT_TRUE(std::equal(
        source.bytes.begin(), source.bytes.begin() + 600, target.bytes.begin()));
    const auto sent = poll_completions(pair.a.send_cq.get(), 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].opcode, IBV_WC_RDMA_WRITE);
}

TEST(RcTraffic, InlineDataMayBeReusedAtOnceAndNeedsNoRegistration)
{
    rc_options options;
    options.inline_data = 64;
    rc_pair pair = make_connected_pair(options, options);
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer target = register_buffer(pair.b.pd.get(), 64);
    ASSERT_EQ(post_one_receive(pair.b.qp.get(), 1, target.sge()), 0);
    std::string message = "inline, from unregistered memory";
    ibv_sge sge{ reinterpret_cast<uintptr_t>(message.data()),
                 static_cast<uint32_t>(message.size()),
                 0 };
    ASSERT_EQ(post_one_send(pair.a.qp.get(), 1, IBV_WR_SEND, { sge }, IBV_SEND_INLINE),
              0);
    std::fill(message.begin(), message.end(), 'x'); // reused at once
    const auto received = poll_completions(pair.b.receive_cq.get(), 1);
    ASSERT_EQ(received.size(), 1u);
    EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(
        std::string(target.bytes.begin(), target.bytes.begin() + received[0].byte_len),
        "inline, from unregistered memory");
    // Beyond the granted max_inline_data: refused at posting.
    std::string longer(65, 'y');
    sge.addr = reinterpret_cast<uintptr_t>(longer.data());
    sge.length = 65;
    EXPECT_EQ(post_one_send(pair.a.qp.get(), 2, IBV_WR_SEND, { sge }, IBV_SEND_INLINE),
              EINVAL);
}

TEST(RcTraffic, OnlySignalledWrsCompleteAndEverythingArrivesInOrder)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    constexpr int count = 24; // fewer than either queue holds
    registered_buffer source = register_buffer(pair.a.pd.get(), count * 8);
    registered_buffer target = register_buffer(pair.b.pd.get(), count * 8);
    for (int i = 0; i < count; i++)
        ASSERT_EQ(post_one_receive(pair.b.qp.get(), 100 + i, target.sge(i * 8, 8)), 0);
    for (int i = 0; i < count; i++) {
        source.bytes[i * 8] = static_cast<uint8_t>(i);
        const int flags = (i % 4 == 3) ? IBV_SEND_SIGNALED : 0;
        ASSERT_EQ(post_one_send(
                      pair.a.qp.get(), i, IBV_WR_SEND, { source.sge(i * 8, 8) }, flags),
                  0);
    }
    const auto received = poll_completions(pair.b.receive_cq.get(), count);
    ASSERT_EQ(received.size(), static_cast<size_t>(count));
    for (int i = 0; i < count; i++) {
        EXPECT_EQ(received[i].wr_id, static_cast<uint64_t>(100 + i));
        EXPECT_EQ(target.bytes[i * 8], i);
    }
    const auto sent = poll_completions(pair.a.send_cq.get(), count / 4);
    ASSERT_EQ(sent.size(), static_cast<size_t>(count / 4));
    for (int i = 0; i < count / 4; i++)
        EXPECT_EQ(sent[i].wr_id, static_cast<uint64_t>(i * 4 + 3));
    EXPECT_TRUE(poll_completions(pair.a.send_cq.get(), 1, std::chrono::milliseconds(100))
                    .empty());
}

TEST(RcTraffic, ASendCompletesOnlyOnceThePeerAcknowledgedIt)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer source = register_buffer(pair.a.pd.get(), 32);
    registered_buffer target = register_buffer(pair.b.pd.get(), 32);
    // No receive posted yet: the responder NAKs (RNR) and the requester retries
    // (rnr_retry 7: forever), so nothing completes.
    ASSERT_EQ(post_one_send(pair.a.qp.get(), 1, IBV_WR_SEND, { source.sge() }), 0);
    EXPECT_TRUE(poll_completions(pair.a.send_cq.get(), 1, std::chrono::milliseconds(300))
                    .empty());
    ASSERT_EQ(post_one_receive(pair.b.qp.get(), 9, target.sge()), 0);
    const auto sent = poll_completions(pair.a.send_cq.get(), 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
    const auto received = poll_completions(pair.b.receive_cq.get(), 1);
    ASSERT_EQ(received.size(), 1u);
    EXPECT_EQ(received[0].wr_id, 9u);
}

TEST(RcTraffic, BothDirectionsAtOnce)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    constexpr size_t size = 256 * 1024;
    registered_buffer a_out = register_buffer(pair.a.pd.get(), size);
    registered_buffer a_in = register_buffer(pair.a.pd.get(), size);
    registered_buffer b_out = register_buffer(pair.b.pd.get(), size);
    registered_buffer b_in = register_buffer(pair.b.pd.get(), size);
    fill(a_out, 1);
    fill(b_out, 2);
    ASSERT_EQ(post_one_receive(pair.a.qp.get(), 1, a_in.sge()), 0);
    ASSERT_EQ(post_one_receive(pair.b.qp.get(), 1, b_in.sge()), 0);
    ASSERT_EQ(post_one_send(pair.a.qp.get(), 1, IBV_WR_SEND, { a_out.sge() }), 0);
    ASSERT_EQ(post_one_send(pair.b.qp.get(), 1, IBV_WR_SEND, { b_out.sge() }), 0);
    ASSERT_EQ(poll_completions(pair.a.receive_cq.get(), 1).size(), 1u);
    ASSERT_EQ(poll_completions(pair.b.receive_cq.get(), 1).size(), 1u);
    EXPECT_EQ(a_in.bytes, b_out.bytes);
    EXPECT_EQ(b_in.bytes, a_out.bytes);
}

TEST(RcTraffic, RdmaReadBringsThePeersBytesIntoTheSges)
{
    rc_options readable;
    readable.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
    rc_pair pair = make_connected_pair({}, readable);
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer remote = register_buffer(
        pair.b.pd.get(), 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
    fill(remote, 5);
    registered_buffer local = register_buffer(pair.a.pd.get(), 4096);
    ASSERT_EQ(post_one_send(pair.a.qp.get(),
                            8,
                            IBV_WR_RDMA_READ,
                            { local.sge(0, 1000), local.sge(2000, 1000) },
                            IBV_SEND_SIGNALED,
                            reinterpret_cast<uintptr_t>(remote.bytes.data()) + 100,
                            remote.mr->rkey),
              0);
    const auto done = poll_completions(pair.a.send_cq.get(), 1);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(done[0].opcode, IBV_WC_RDMA_READ);
    EXPECT_EQ(done[0].wr_id, 8u);
    EXPECT_TRUE(std::equal(
        remote.bytes.begin() + 100, remote.bytes.begin() + 1100, local.bytes.begin()));
    EXPECT_TRUE(std::equal(remote.bytes.begin() + 1100,
                           remote.bytes.begin() + 2100,
                           local.bytes.begin() + 2000));
}

TEST(RcTraffic, SqSigAllCompletesEverySend)
{
    rc_options all;
    all.signal_all = true;
    rc_pair pair = make_connected_pair(all, {});
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer source = register_buffer(pair.a.pd.get(), 64);
    registered_buffer target = register_buffer(pair.b.pd.get(), 64, remote_access);
    for (uint64_t i = 0; i < 3; i++)
        ASSERT_EQ(post_one_send(pair.a.qp.get(),
                                i,
                                IBV_WR_RDMA_WRITE,
                                { source.sge() },
                                0, // not IBV_SEND_SIGNALED
                                reinterpret_cast<uintptr_t>(target.bytes.data()),
                                target.mr->rkey),
                  0);
    const auto sent = poll_completions(pair.a.send_cq.get(), 3);
    ASSERT_EQ(sent.size(), 3u);
    for (uint64_t i = 0; i < 3; i++) {
        EXPECT_EQ(sent[i].wr_id, i);
        EXPECT_EQ(sent[i].status, IBV_WC_SUCCESS);
    }
}
