/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// rdma_cm's connection handshake on the emulated device, without QPs (the application
// gives qp_num in rdma_conn_param): connect, accept, reject, disconnect, a dead peer, and
// private data both ways within RoCE's limits.
#include "cm_test_support.h"
#include "verbs_test_support.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace cm_test;

rdma_conn_param with_private_data(const std::vector<uint8_t>& data, uint32_t qp_num)
{
    rdma_conn_param param{};
    param.private_data = data.data();
    param.private_data_len = static_cast<uint8_t>(data.size());
    param.responder_resources = 1;
    param.initiator_depth = 1;
    param.retry_count = 7;
    param.rnr_retry_count = 7;
    param.qp_num = qp_num;
    return param;
}

// Active and passive ids connected (no QP: CONNECT_RESPONSE, then rdma_establish).
struct connected_pair {
    listener server;
    connector client{ server.port };
    id_ptr accepted;

    connected_pair()
    {
        rdma_conn_param request{};
        request.qp_num = 0x111;
        EXPECT_EQ(rdma_connect(client.id.get(), &request), 0);
        event_copy incoming =
            expect_event(server.channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
        accepted.reset(incoming.id);
        rdma_conn_param answer{};
        answer.qp_num = 0x222;
        EXPECT_EQ(rdma_accept(accepted.get(), &answer), 0);
        expect_event(client.channel.get(), RDMA_CM_EVENT_CONNECT_RESPONSE);
        EXPECT_EQ(rdma_establish(client.id.get()), 0);
        expect_event(server.channel.get(), RDMA_CM_EVENT_ESTABLISHED);
    }
};

TEST(CmConnection, ConnectAndAcceptCarryPrivateDataBothWaysAtRoceLimits)
{
    listener server;
    connector client(server.port);
    const auto request_data = pattern(56, 1);
    rdma_conn_param request = with_private_data(request_data, 0x123456);
    ASSERT_EQ(rdma_connect(client.id.get(), &request), 0);

    event_copy incoming =
        expect_event(server.channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
    ASSERT_NE(incoming.id, nullptr);
    id_ptr accepted(incoming.id);
    EXPECT_EQ(incoming.listen_id, server.id.get());
    EXPECT_EQ(incoming.param.qp_num, 0x123456u);
    EXPECT_EQ(incoming.private_data, request_data);
    EXPECT_EQ(accepted->verbs, client.id->verbs); // the device owning 127.0.0.1
    EXPECT_EQ(rdma_get_dst_port(accepted.get()), rdma_get_src_port(client.id.get()));

    const auto answer_data = pattern(196, 100);
    rdma_conn_param answer = with_private_data(answer_data, 0x654321);
    ASSERT_EQ(rdma_accept(accepted.get(), &answer), 0);
    event_copy response =
        expect_event(client.channel.get(), RDMA_CM_EVENT_CONNECT_RESPONSE);
    EXPECT_EQ(response.param.qp_num, 0x654321u);
    EXPECT_EQ(response.private_data, answer_data);
    ASSERT_EQ(rdma_establish(client.id.get()), 0);
    expect_event(server.channel.get(), RDMA_CM_EVENT_ESTABLISHED);
}

TEST(CmConnection, ShortPrivateDataArrivesZeroPaddedToTheCmMessage)
{
    listener server;
    connector client(server.port);
    const std::vector<uint8_t> hello = { 'h', 'i' };
    rdma_conn_param request = with_private_data(hello, 1);
    ASSERT_EQ(rdma_connect(client.id.get(), &request), 0);
    event_copy incoming =
        expect_event(server.channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
    id_ptr accepted(incoming.id);
    ASSERT_EQ(incoming.private_data.size(), 56u);
    EXPECT_EQ(incoming.private_data[0], 'h');
    EXPECT_EQ(incoming.private_data[1], 'i');
    EXPECT_EQ(incoming.private_data[2], 0);
}

TEST(CmConnection, PrivateDataAboveRoceLimitsIsEinval)
{
    listener server;
    connector client(server.port);
    const auto too_long = pattern(57, 0);
    rdma_conn_param request = with_private_data(too_long, 1);
    errno = 0;
    EXPECT_EQ(rdma_connect(client.id.get(), &request), -1);
    EXPECT_EQ(errno, EINVAL);

    rdma_conn_param fits = with_private_data(pattern(8, 0), 1);
    ASSERT_EQ(rdma_connect(client.id.get(), &fits), 0);
    event_copy incoming =
        expect_event(server.channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
    id_ptr accepted(incoming.id);
    const auto answer_too_long = pattern(197, 0);
    rdma_conn_param answer = with_private_data(answer_too_long, 2);
    errno = 0;
    EXPECT_EQ(rdma_accept(accepted.get(), &answer), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST(CmConnection, RejectGivesRejectedWithTheConsumerReasonAndPrivateData)
{
    listener server;
    connector client(server.port);
    rdma_conn_param request{};
    ASSERT_EQ(rdma_connect(client.id.get(), &request), 0);
    event_copy incoming =
        expect_event(server.channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
    id_ptr refused(incoming.id);
    const auto reason = pattern(148, 7);
    ASSERT_EQ(
        rdma_reject(refused.get(), reason.data(), static_cast<uint8_t>(reason.size())),
        0);
    event_copy rejected = expect_event(client.channel.get(), RDMA_CM_EVENT_REJECTED);
    EXPECT_EQ(rejected.status, 28); // IB_CM_REJ_CONSUMER_DEFINED
    EXPECT_EQ(rejected.private_data, reason);
}

TEST(CmConnection, NothingListeningOnAReachableHostGivesRejected)
{
    listener closed;
    const uint16_t port = closed.port;
    closed.id.reset(); // the port is free again: nothing listens on it
    connector client(port);
    rdma_conn_param request{};
    ASSERT_EQ(rdma_connect(client.id.get(), &request), 0);
    event_copy rejected = expect_event(client.channel.get(), RDMA_CM_EVENT_REJECTED);
    EXPECT_EQ(rejected.status, 8); // IB_CM_REJ_INVALID_SERVICE_ID
}

TEST(CmConnection, ConnectBeforeTheRouteIsResolvedFailsWithEinval)
{
    channel_ptr channel = make_channel();
    id_ptr id = make_id(channel.get());
    errno = 0;
    EXPECT_EQ(rdma_connect(id.get(), nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST(CmConnection, DisconnectFromTheActiveSideGivesDisconnectedOnBothThenTimewaitExit)
{
    connected_pair pair;
    ASSERT_EQ(rdma_disconnect(pair.client.id.get()), 0);
    expect_event(pair.server.channel.get(), RDMA_CM_EVENT_DISCONNECTED);
    expect_event(pair.client.channel.get(), RDMA_CM_EVENT_DISCONNECTED);
    expect_event(pair.server.channel.get(), RDMA_CM_EVENT_TIMEWAIT_EXIT);
    expect_event(pair.client.channel.get(), RDMA_CM_EVENT_TIMEWAIT_EXIT);
    // The passive side answering the DREQ late is allowed and changes nothing.
    EXPECT_EQ(rdma_disconnect(pair.accepted.get()), 0);
}

TEST(CmConnection, DisconnectFromThePassiveSideGivesDisconnectedOnBoth)
{
    connected_pair pair;
    ASSERT_EQ(rdma_disconnect(pair.accepted.get()), 0);
    expect_event(pair.client.channel.get(), RDMA_CM_EVENT_DISCONNECTED);
    expect_event(pair.server.channel.get(), RDMA_CM_EVENT_DISCONNECTED);
}

TEST(CmConnection, APeerDestroyingItsIdGivesDisconnected)
{
    connected_pair pair;
    pair.client.id.reset();
    expect_event(pair.server.channel.get(), RDMA_CM_EVENT_DISCONNECTED);
}

TEST(CmConnection, AKilledPeerProcessGivesDisconnected)
{
    listener server;
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // The peer: connects, says it is established, then waits to be killed.
        close(ready[0]);
        connector client(server.port);
        rdma_conn_param request{};
        if (rdma_connect(client.id.get(), &request) != 0)
            _exit(1);
        if (next_event(client.channel.get()).type != RDMA_CM_EVENT_CONNECT_RESPONSE ||
            rdma_establish(client.id.get()) != 0)
            _exit(2);
        const char byte = 1;
        if (write(ready[1], &byte, 1) != 1)
            _exit(3);
        pause();
        _exit(0);
    }
    close(ready[1]);
    event_copy incoming =
        expect_event(server.channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
    id_ptr accepted(incoming.id);
    rdma_conn_param answer{};
    ASSERT_EQ(rdma_accept(accepted.get(), &answer), 0);
    expect_event(server.channel.get(), RDMA_CM_EVENT_ESTABLISHED);
    char byte = 0;
    ASSERT_EQ(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    expect_event(server.channel.get(), RDMA_CM_EVENT_DISCONNECTED);
}

TEST(CmConnection, MigratingAnIdMovesItsQueuedEvents)
{
    listener server;
    connector client(server.port);
    rdma_conn_param request{};
    ASSERT_EQ(rdma_connect(client.id.get(), &request), 0);
    event_copy incoming =
        expect_event(server.channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
    id_ptr accepted(incoming.id);
    channel_ptr own = make_channel();
    ASSERT_EQ(rdma_migrate_id(accepted.get(), own.get()), 0);
    rdma_conn_param answer{};
    ASSERT_EQ(rdma_accept(accepted.get(), &answer), 0);
    expect_event(client.channel.get(), RDMA_CM_EVENT_CONNECT_RESPONSE);
    ASSERT_EQ(rdma_establish(client.id.get()), 0);
    expect_event(own.get(), RDMA_CM_EVENT_ESTABLISHED);
    accepted.reset(); // before its channel
}

} // namespace
