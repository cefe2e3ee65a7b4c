/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// QPs on rdma_cm ids: rdma_create_qp's RC QP walks INIT, RTR and RTS through the
// handshake, carries messages (the rdma_verbs.h helpers), and goes to ERR, flushing its
// receives, at its side's rdma_disconnect; a silent path or a killed peer is
// DISCONNECTED.
#include "cm_test_support.h"
#include "verbs_test_support.h"

#include <rdma/rdma_verbs.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstring>
#include <string>

namespace {

using namespace cm_test;

ibv_qp_init_attr rc_attr()
{
    ibv_qp_init_attr attr{};
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = 4;
    attr.cap.max_recv_wr = 4;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    attr.sq_sig_all = 1;
    return attr;
}

ibv_qp_state state_of(ibv_qp* qp)
{
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    EXPECT_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), 0);
    return attr.qp_state;
}

// Both ids with QPs, connected; each with a registered buffer and a receive posted.
struct connected_qps {
    listener server;
    connector client{ server.port };
    id_ptr accepted;
    char client_buffer[64]{};
    char server_buffer[64]{};
    ibv_mr* client_mr = nullptr;
    ibv_mr* server_mr = nullptr;

    connected_qps()
    {
        ibv_qp_init_attr attr = rc_attr();
        EXPECT_EQ(rdma_create_qp(client.id.get(), nullptr, &attr), 0) << strerror(errno);
        EXPECT_EQ(state_of(client.id->qp), IBV_QPS_INIT);
        client_mr = rdma_reg_msgs(client.id.get(), client_buffer, sizeof(client_buffer));
        EXPECT_EQ(rdma_post_recv(client.id.get(),
                                 nullptr,
                                 client_buffer,
                                 sizeof(client_buffer),
                                 client_mr),
                  0);
        rdma_conn_param request{};
        request.retry_count = 7;
        request.rnr_retry_count = 7;
        EXPECT_EQ(rdma_connect(client.id.get(), &request), 0);

        event_copy incoming =
            expect_event(server.channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
        accepted.reset(incoming.id);
        EXPECT_EQ(incoming.param.qp_num, client.id->qp->qp_num);
        attr = rc_attr();
        EXPECT_EQ(rdma_create_qp(accepted.get(), nullptr, &attr), 0) << strerror(errno);
        server_mr = rdma_reg_msgs(accepted.get(), server_buffer, sizeof(server_buffer));
        EXPECT_EQ(
            rdma_post_recv(
                accepted.get(), nullptr, server_buffer, sizeof(server_buffer), server_mr),
            0);
        rdma_conn_param answer{};
        answer.rnr_retry_count = 7;
        EXPECT_EQ(rdma_accept(accepted.get(), &answer), 0);
        EXPECT_EQ(state_of(accepted->qp), IBV_QPS_RTS);
        // With a QP on the id the active side gets ESTABLISHED directly.
        event_copy established =
            expect_event(client.channel.get(), RDMA_CM_EVENT_ESTABLISHED);
        EXPECT_EQ(established.param.qp_num, accepted->qp->qp_num);
        expect_event(server.channel.get(), RDMA_CM_EVENT_ESTABLISHED);
        EXPECT_EQ(state_of(client.id->qp), IBV_QPS_RTS);
    }

    ~connected_qps()
    {
        rdma_dereg_mr(client_mr);
        rdma_dereg_mr(server_mr);
        if (accepted)
            rdma_destroy_qp(accepted.get());
        if (client.id)
            rdma_destroy_qp(client.id.get());
    }
};

ibv_wc receive_completion(rdma_cm_id* id)
{
    ibv_wc wc{};
    EXPECT_EQ(rdma_get_recv_comp(id, &wc), 1) << strerror(errno);
    return wc;
}

TEST(CmQp, TheHandshakeWalksBothQpsToRtsAndTheyCarryMessagesBothWays)
{
    connected_qps pair;
    const char hello[] = "hello server";
    memcpy(pair.client_buffer + 32, hello, sizeof(hello));
    ASSERT_EQ(rdma_post_send(pair.client.id.get(),
                             nullptr,
                             pair.client_buffer + 32,
                             sizeof(hello),
                             pair.client_mr,
                             0),
              0);
    ibv_wc wc = receive_completion(pair.accepted.get());
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
    EXPECT_EQ(wc.byte_len, sizeof(hello));
    EXPECT_STREQ(pair.server_buffer, hello);
    ibv_wc sent{};
    EXPECT_EQ(rdma_get_send_comp(pair.client.id.get(), &sent), 1);
    EXPECT_EQ(sent.status, IBV_WC_SUCCESS);

    const char reply[] = "hello client";
    memcpy(pair.server_buffer + 32, reply, sizeof(reply));
    ASSERT_EQ(rdma_post_send(pair.accepted.get(),
                             nullptr,
                             pair.server_buffer + 32,
                             sizeof(reply),
                             pair.server_mr,
                             0),
              0);
    wc = receive_completion(pair.client.id.get());
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
    EXPECT_STREQ(pair.client_buffer, reply);
}

TEST(CmQp, InitQpAttrGivesThePeersQpnAndTheIpv4MappedGid)
{
    connected_qps pair;
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    int mask = 0;
    ASSERT_EQ(rdma_init_qp_attr(pair.client.id.get(), &attr, &mask), 0);
    EXPECT_EQ(attr.dest_qp_num, pair.accepted->qp->qp_num);
    EXPECT_TRUE(attr.ah_attr.is_global);
    EXPECT_EQ(attr.ah_attr.grh.dgid.raw[10], 0xff);
    EXPECT_EQ(attr.ah_attr.grh.dgid.raw[12], 127);
    EXPECT_TRUE(mask & IBV_QP_DEST_QPN);
    EXPECT_TRUE(mask & IBV_QP_AV);
}

TEST(CmQp, EachSidesDisconnectMovesItsQpToErrorAndFlushesItsReceives)
{
    connected_qps pair;
    ASSERT_EQ(rdma_disconnect(pair.client.id.get()), 0);
    EXPECT_EQ(state_of(pair.client.id->qp), IBV_QPS_ERR);
    EXPECT_EQ(receive_completion(pair.client.id.get()).status, IBV_WC_WR_FLUSH_ERR);
    expect_event(pair.server.channel.get(), RDMA_CM_EVENT_DISCONNECTED);
    // As librdmacm: the CM leaves the QP alone; the application's own rdma_disconnect
    // (every rdma_cm program answers DISCONNECTED with it) stops it.
    EXPECT_EQ(state_of(pair.accepted->qp), IBV_QPS_RTS);
    ASSERT_EQ(rdma_disconnect(pair.accepted.get()), 0);
    EXPECT_EQ(state_of(pair.accepted->qp), IBV_QPS_ERR);
    EXPECT_EQ(receive_completion(pair.accepted.get()).status, IBV_WC_WR_FLUSH_ERR);
}

TEST(CmQp, ASilentPathGivesDisconnectedThroughTheKeepalive)
{
    connected_qps pair;
    // Loopback down: nothing reaches the peer any more, as with a veth taken down.
    verbs_test::run_command("ip link set lo down");
    event_copy lost = next_event(pair.server.channel.get(), 20000);
    verbs_test::run_command("ip link set lo up");
    EXPECT_EQ(lost.type, RDMA_CM_EVENT_DISCONNECTED) << rdma_event_str(lost.type);
}

TEST(CmQp, AKilledPeerProcessGivesDisconnected)
{
    // The peer is librdmacm's own rdma_client, a process of its own: it sends one
    // message, then waits for a reply forever.
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP()
        << "under ThreadSanitizer the stand-ins are instrumented and cannot load "
           "into the uninstrumented rdma_client";
#endif
    const char* program = "/usr/bin/rdma_client";
    if (access(program, X_OK) != 0)
        GTEST_SKIP() << program << " (Debian rdmacm-utils) is not installed";
    listener server;
    const std::string port = std::to_string(server.port);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        execl(program, "rdma_client", "-s", "127.0.0.1", "-p", port.c_str(), nullptr);
        _exit(127);
    }
    event_copy incoming =
        expect_event(server.channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
    id_ptr accepted(incoming.id);
    ASSERT_NE(accepted, nullptr);
    ibv_qp_init_attr attr = rc_attr();
    ASSERT_EQ(rdma_create_qp(accepted.get(), nullptr, &attr), 0) << strerror(errno);
    char buffer[64]{};
    ibv_mr* mr = rdma_reg_msgs(accepted.get(), buffer, sizeof(buffer));
    ASSERT_NE(mr, nullptr);
    ASSERT_EQ(rdma_post_recv(accepted.get(), nullptr, buffer, sizeof(buffer), mr), 0);
    rdma_conn_param answer{};
    ASSERT_EQ(rdma_accept(accepted.get(), &answer), 0);
    expect_event(server.channel.get(), RDMA_CM_EVENT_ESTABLISHED);
    // Its message arrived: it is up, and now waits for the reply.
    EXPECT_EQ(receive_completion(accepted.get()).status, IBV_WC_SUCCESS);
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    expect_event(server.channel.get(), RDMA_CM_EVENT_DISCONNECTED);
    ASSERT_EQ(rdma_disconnect(accepted.get()), 0);
    EXPECT_EQ(state_of(accepted->qp), IBV_QPS_ERR);
    rdma_dereg_mr(mr);
    rdma_destroy_qp(accepted.get());
}

} // namespace
