/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// RC errors: the responder's rkey, bounds and access checks, RNR retry exhaustion,
// transport retry exhaustion when the peer is gone, flushing, and a message too long
// for its receive.
#include "rc_test_support.h"

using namespace verbs_test;

namespace {

constexpr int remote_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

ibv_qp_state state_of(ibv_qp* qp)
{
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    EXPECT_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), 0);
    return attr.qp_state;
}

// A refused RDMA write: REM_ACCESS_ERR at the requester, whose QP goes to ERR and
// flushes the WR behind it; the responder's QP goes to ERR with QP_ACCESS_ERR.
void expect_refused_write(rc_pair& pair, uint64_t address, uint32_t rkey, uint32_t length)
{
    registered_buffer source = register_buffer(pair.a.pd.get(), 4096);
    ASSERT_EQ(post_one_send(pair.a.qp.get(),
                            1,
                            IBV_WR_RDMA_WRITE,
                            { source.sge(0, length) },
                            IBV_SEND_SIGNALED,
                            address,
                            rkey),
              0);
    ASSERT_EQ(post_one_send(pair.a.qp.get(), 2, IBV_WR_SEND, { source.sge(0, 8) }, 0), 0);
    const auto sent = poll_completions(pair.a.send_cq.get(), 2);
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[0].wr_id, 1u);
    EXPECT_EQ(sent[0].status, IBV_WC_REM_ACCESS_ERR);
    EXPECT_EQ(sent[1].wr_id, 2u);
    EXPECT_EQ(sent[1].status, IBV_WC_WR_FLUSH_ERR) << "unsignalled, but flushed";
    EXPECT_EQ(state_of(pair.a.qp.get()), IBV_QPS_ERR);
    ibv_async_event event{};
    ASSERT_TRUE(next_async_event(pair.b.context.get(), event));
    EXPECT_EQ(event.event_type, IBV_EVENT_QP_ACCESS_ERR);
    EXPECT_EQ(event.element.qp, pair.b.qp.get());
    ibv_ack_async_event(&event);
    EXPECT_EQ(state_of(pair.b.qp.get()), IBV_QPS_ERR);
}

} // namespace

TEST(RcErrors, AWriteWithAnUnknownRkeyIsARemoteAccessError)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer target = register_buffer(pair.b.pd.get(), 4096, remote_access);
    expect_refused_write(pair,
                         reinterpret_cast<uintptr_t>(target.bytes.data()),
                         target.mr->rkey + 1000,
                         64);
}

TEST(RcErrors, AWritePastTheRegionIsARemoteAccessError)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer target = register_buffer(pair.b.pd.get(), 4096, remote_access);
    expect_refused_write(pair,
                         reinterpret_cast<uintptr_t>(target.bytes.data()) + 4000,
                         target.mr->rkey,
                         200);
    EXPECT_EQ(target.bytes[4000], 0) << "nothing written";
}

TEST(RcErrors, AWriteToARegionWithoutRemoteWriteIsARemoteAccessError)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer target =
        register_buffer(pair.b.pd.get(), 4096, IBV_ACCESS_LOCAL_WRITE);
    expect_refused_write(
        pair, reinterpret_cast<uintptr_t>(target.bytes.data()), target.mr->rkey, 64);
}

TEST(RcErrors, AWriteToAQpWithoutRemoteWriteAccessIsARemoteAccessError)
{
    rc_options local_only;
    local_only.access = IBV_ACCESS_LOCAL_WRITE;
    rc_pair pair = make_connected_pair({}, local_only);
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer target = register_buffer(pair.b.pd.get(), 4096, remote_access);
    expect_refused_write(
        pair, reinterpret_cast<uintptr_t>(target.bytes.data()), target.mr->rkey, 64);
}

TEST(RcErrors, AZeroLengthWriteNamesNoMemoryButNeedsRemoteWriteAccess)
{
    // IBA C9-88: the rkey and address of a zero-length RDMA write are not checked, so
    // one with neither (and no SGE) is acknowledged: a probe that the peer still
    // answers. The QP's own remote-write access still is checked.
    const auto probe = [](ibv_qp* qp) {
        ibv_send_wr wr{};
        wr.wr_id = 5;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.send_flags = IBV_SEND_SIGNALED;
        ibv_send_wr* bad = nullptr;
        return ibv_post_send(qp, &wr, &bad);
    };
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    ASSERT_EQ(probe(pair.a.qp.get()), 0);
    const auto sent = poll_completions(pair.a.send_cq.get(), 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].wr_id, 5u);
    EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(sent[0].opcode, IBV_WC_RDMA_WRITE);
    EXPECT_EQ(state_of(pair.a.qp.get()), IBV_QPS_RTS);
    EXPECT_EQ(state_of(pair.b.qp.get()), IBV_QPS_RTS);

    rc_options local_only;
    local_only.access = IBV_ACCESS_LOCAL_WRITE;
    rc_pair closed = make_connected_pair({}, local_only);
    ASSERT_NE(closed.b.qp, nullptr);
    ASSERT_EQ(probe(closed.a.qp.get()), 0);
    const auto refused = poll_completions(closed.a.send_cq.get(), 1);
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0].status, IBV_WC_REM_ACCESS_ERR);
    EXPECT_EQ(state_of(closed.a.qp.get()), IBV_QPS_ERR);
}

TEST(RcErrors, NoReceivePostedExhaustsRnrRetries)
{
    rc_options limited;
    limited.rnr_retry = 2;
    rc_pair pair = make_connected_pair(limited, {});
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer source = register_buffer(pair.a.pd.get(), 64);
    registered_buffer target = register_buffer(pair.b.pd.get(), 64);
    ASSERT_EQ(post_one_send(pair.a.qp.get(), 1, IBV_WR_SEND, { source.sge() }), 0);
    ASSERT_EQ(post_one_send(pair.a.qp.get(), 2, IBV_WR_SEND, { source.sge() }), 0);
    const auto sent = poll_completions(pair.a.send_cq.get(), 2);
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
    EXPECT_EQ(sent[1].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(state_of(pair.a.qp.get()), IBV_QPS_ERR);
    // The responder is unharmed: an RNR is the requester's error.
    EXPECT_EQ(state_of(pair.b.qp.get()), IBV_QPS_RTS);
    EXPECT_EQ(post_one_receive(pair.b.qp.get(), 1, target.sge()), 0);
}

TEST(RcErrors, APeerThatIsGoneExhaustsTransportRetries)
{
    rc_options quick;
    quick.timeout = 10; // 4.2 ms
    quick.retry_cnt = 2;
    rc_pair pair = make_connected_pair(quick, {});
    ASSERT_NE(pair.b.qp, nullptr);
    pair.b.qp.reset(); // its listening port closes: the peer QP is gone
    registered_buffer source = register_buffer(pair.a.pd.get(), 64);
    const auto started = std::chrono::steady_clock::now();
    ASSERT_EQ(post_one_send(pair.a.qp.get(), 1, IBV_WR_SEND, { source.sge() }), 0);
    const auto sent = poll_completions(pair.a.send_cq.get(), 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].status, IBV_WC_RETRY_EXC_ERR);
    // (retry_cnt + 1) timeouts, not less: the requester waits out each one.
    EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(8));
    EXPECT_EQ(state_of(pair.a.qp.get()), IBV_QPS_ERR);
}

TEST(RcErrors, AMessageLongerThanTheReceiveFailsBothSides)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer source = register_buffer(pair.a.pd.get(), 256);
    registered_buffer target = register_buffer(pair.b.pd.get(), 256);
    ASSERT_EQ(post_one_receive(pair.b.qp.get(), 1, target.sge(0, 100)), 0);
    ASSERT_EQ(post_one_receive(pair.b.qp.get(), 2, target.sge(100, 100)), 0);
    ASSERT_EQ(post_one_send(pair.a.qp.get(), 1, IBV_WR_SEND, { source.sge(0, 200) }), 0);
    const auto sent = poll_completions(pair.a.send_cq.get(), 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].status, IBV_WC_REM_INV_REQ_ERR);
    const auto received = poll_completions(pair.b.receive_cq.get(), 2);
    ASSERT_EQ(received.size(), 2u);
    EXPECT_EQ(received[0].status, IBV_WC_LOC_LEN_ERR);
    EXPECT_EQ(received[1].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(state_of(pair.b.qp.get()), IBV_QPS_ERR);
}

TEST(RcErrors, AnUnregisteredSendBufferIsALocalProtectionError)
{
    rc_pair pair = make_connected_pair();
    ASSERT_NE(pair.b.qp, nullptr);
    registered_buffer source = register_buffer(pair.a.pd.get(), 64);
    ibv_sge bad = source.sge();
    bad.lkey += 77;
    ASSERT_EQ(post_one_send(pair.a.qp.get(), 1, IBV_WR_SEND, { bad }), 0);
    const auto sent = poll_completions(pair.a.send_cq.get(), 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].status, IBV_WC_LOC_PROT_ERR);
    EXPECT_EQ(state_of(pair.a.qp.get()), IBV_QPS_ERR);
}

TEST(RcErrors, AReadWithoutRemoteReadAccessIsARemoteAccessError)
{
    rc_options readable;
    readable.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
    rc_pair pair = make_connected_pair({}, readable);
    ASSERT_NE(pair.b.qp, nullptr);
    // Registered for remote writes only.
    registered_buffer remote = register_buffer(pair.b.pd.get(), 4096, remote_access);
    registered_buffer local = register_buffer(pair.a.pd.get(), 4096);
    ASSERT_EQ(post_one_send(pair.a.qp.get(),
                            1,
                            IBV_WR_RDMA_READ,
                            { local.sge(0, 64) },
                            IBV_SEND_SIGNALED,
                            reinterpret_cast<uintptr_t>(remote.bytes.data()),
                            remote.mr->rkey),
              0);
    const auto done = poll_completions(pair.a.send_cq.get(), 1);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].status, IBV_WC_REM_ACCESS_ERR);
    ibv_async_event event{};
    ASSERT_TRUE(next_async_event(pair.b.context.get(), event));
    EXPECT_EQ(event.event_type, IBV_EVENT_QP_ACCESS_ERR);
    ibv_ack_async_event(&event);
}
