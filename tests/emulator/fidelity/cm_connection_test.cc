/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// rdma_cm's connection handshake on the emulated device, without QPs (the application
// gives qp_num in rdma_conn_param): connect, accept, reject, disconnect, a dead peer, and
// private data both ways within RoCE's limits.
#include "cm_test_support.h"
#include "verbs_test_support.h"

#include <fcntl.h>

#include <chrono>
#include <thread>

namespace {

using namespace cm_test;

// rdma_connect, then waits until the listener's channel holds the request, unread.
bool connect_until_the_request_is_queued(connector& client, listener& server)
{
    rdma_conn_param request{};
    if (rdma_connect(client.id.get(), &request) != 0)
        return false;
    pollfd queued{ server.channel->fd, POLLIN, 0 };
    return poll(&queued, 1, 10000) == 1;
}

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
    event_copy incoming = connect_and_receive(client, server);
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

TEST(CmConnection, MigratingAnIdMovesItsQueuedEvents)
{
    listener server;
    connector client(server.port);
    event_copy incoming = connect_and_receive(client, server);
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

TEST(CmConnection, AHostThatNeverAnswersGivesUnreachableWithEtimedout)
{
    // 198.51.100.1 routes out of loopback and nobody owns it: the looped-back SYN is
    // dropped (no forwarding), as by a powered-off host.
    verbs_test::run_command("ip route add 198.51.100.0/24 dev lo src 127.0.0.1");
    channel_ptr channel = make_channel();
    id_ptr id = make_id(channel.get());
    ASSERT_EQ(start_resolving(id.get(), "198.51.100.1", 7150), 0);
    expect_event(channel.get(), RDMA_CM_EVENT_ADDR_RESOLVED);
    EXPECT_EQ(id->route.addr.src_sin.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    ASSERT_EQ(rdma_resolve_route(id.get(), 2000), 0);
    expect_event(channel.get(), RDMA_CM_EVENT_ROUTE_RESOLVED);
    rdma_conn_param request{};
    ASSERT_EQ(rdma_connect(id.get(), &request), 0);
    event_copy unreachable = next_event(channel.get(), 20000);
    verbs_test::run_command("ip route del 198.51.100.0/24 dev lo");
    EXPECT_EQ(unreachable.type, RDMA_CM_EVENT_UNREACHABLE)
        << rdma_event_str(unreachable.type);
    EXPECT_EQ(unreachable.status, -ETIMEDOUT);
}

TEST(CmConnection, AListenerOnEveryAddressGivesEachRequestTheDeviceItArrivedOn)
{
    channel_ptr channel = make_channel();
    id_ptr any = make_id(channel.get());
    sockaddr_in address = ipv4("0.0.0.0", 0);
    ASSERT_EQ(rdma_bind_addr(any.get(), reinterpret_cast<sockaddr*>(&address)), 0);
    EXPECT_EQ(any->verbs, nullptr); // no device until a request arrives
    ASSERT_EQ(rdma_listen(any.get(), 0), 0);
    connector client(ntohs(rdma_get_src_port(any.get())));
    rdma_conn_param request{};
    ASSERT_EQ(rdma_connect(client.id.get(), &request), 0);
    event_copy incoming = expect_event(channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
    id_ptr accepted(incoming.id);
    ASSERT_NE(accepted, nullptr);
    EXPECT_EQ(accepted->verbs, client.id->verbs);
}

TEST(CmConnection, DestroyingAListenerDropsTheRequestsNobodyRead)
{
    listener server;
    connector client(server.port);
    ASSERT_TRUE(connect_until_the_request_is_queued(client, server));
    server.id.reset();
    rdma_cm_event* event = nullptr;
    const int flags = fcntl(server.channel->fd, F_GETFL);
    fcntl(server.channel->fd, F_SETFL, flags | O_NONBLOCK);
    EXPECT_EQ(rdma_get_cm_event(server.channel.get(), &event), -1);
    EXPECT_EQ(errno, EAGAIN);
    // The active side hears its REQ went unanswered.
    event_copy lost = next_event(client.channel.get());
    EXPECT_EQ(lost.type, RDMA_CM_EVENT_UNREACHABLE) << rdma_event_str(lost.type);
}

TEST(CmConnection, DestroyingAListenerWithAnUnacknowledgedRequestIsRefused)
{
    listener server;
    connector client(server.port);
    ASSERT_TRUE(connect_until_the_request_is_queued(client, server));
    rdma_cm_event* event = nullptr;
    ASSERT_EQ(rdma_get_cm_event(server.channel.get(), &event), 0);
    ASSERT_EQ(event->event, RDMA_CM_EVENT_CONNECT_REQUEST);
    // librdmacm's rdma_destroy_id waits (forever) for the event's acknowledgement; the
    // emulator waits a bounded time, then names the bug.
    errno = 0;
    EXPECT_EQ(rdma_destroy_id(server.id.get()), -1);
    EXPECT_EQ(errno, EBUSY);
    id_ptr accepted(event->id);
    ASSERT_EQ(rdma_ack_cm_event(event), 0);
    EXPECT_EQ(rdma_destroy_id(server.id.release()), 0);
}

TEST(CmConnection, DestroyingAnIdWaitsForTheEventAnotherThreadIsHandling)
{
    // rping's shape: a CM thread reads DISCONNECTED and prints before acknowledging it,
    // while the main thread, done, destroys the id. librdmacm waits for the ack.
    connected_pair pair;
    ASSERT_EQ(rdma_disconnect(pair.accepted.get()), 0);
    rdma_cm_event* event = nullptr;
    ASSERT_EQ(rdma_get_cm_event(pair.client.channel.get(), &event), 0);
    ASSERT_EQ(event->event, RDMA_CM_EVENT_DISCONNECTED) << rdma_event_str(event->event);
    std::thread handler([event] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        rdma_ack_cm_event(event);
    });
    const auto start = std::chrono::steady_clock::now();
    errno = 0;
    const int status = rdma_destroy_id(pair.client.id.release());
    const auto waited = std::chrono::steady_clock::now() - start;
    handler.join();
    EXPECT_EQ(status, 0) << strerror(errno);
    EXPECT_GE(waited, std::chrono::milliseconds(250));
}

TEST(CmConnection, ThePsnAQpIsGivenBeforeConnectingIsTheOneTheRequestAnnounces)
{
    // An application walking its own QP (rping -q) takes the RTS attributes before
    // rdma_connect; the peer's RTR must expect that same PSN.
    listener server;
    connector client(server.port);
    ibv_qp_attr client_rts{};
    client_rts.qp_state = IBV_QPS_RTS;
    int mask = 0;
    ASSERT_EQ(rdma_init_qp_attr(client.id.get(), &client_rts, &mask), 0);
    EXPECT_TRUE(mask & IBV_QP_SQ_PSN);
    event_copy incoming = connect_and_receive(client, server);
    id_ptr accepted(incoming.id);
    ibv_qp_attr server_rtr{};
    server_rtr.qp_state = IBV_QPS_RTR;
    ASSERT_EQ(rdma_init_qp_attr(accepted.get(), &server_rtr, &mask), 0);
    EXPECT_EQ(server_rtr.rq_psn, client_rts.sq_psn);
    EXPECT_TRUE(mask & IBV_QP_RQ_PSN);
}

} // namespace
