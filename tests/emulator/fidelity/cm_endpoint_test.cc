/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// librdmacm's synchronous style on the emulated device: rdma_getaddrinfo, rdma_create_ep,
// rdma_listen + rdma_get_request, and rdma_connect / rdma_accept that wait for their
// events.
#include "cm_test_support.h"
#include "verbs_test_support.h"

#include <thread>

namespace {

using namespace cm_test;

rdma_addrinfo* address_info(const char* node, const char* port, int flags)
{
    rdma_addrinfo hints{};
    hints.ai_flags = flags;
    hints.ai_port_space = RDMA_PS_TCP;
    rdma_addrinfo* info = nullptr;
    EXPECT_EQ(rdma_getaddrinfo(node, port, &hints, &info), 0) << strerror(errno);
    return info;
}

TEST(CmEndpoint, GetaddrinfoGivesAPassiveSourceOrAnActiveDestination)
{
    rdma_addrinfo* passive = address_info(nullptr, "7150", RAI_PASSIVE);
    ASSERT_NE(passive, nullptr);
    ASSERT_NE(passive->ai_src_addr, nullptr);
    EXPECT_EQ(passive->ai_dst_addr, nullptr);
    EXPECT_EQ(reinterpret_cast<sockaddr_in*>(passive->ai_src_addr)->sin_port,
              htons(7150));
    EXPECT_EQ(passive->ai_port_space, RDMA_PS_TCP);
    EXPECT_EQ(passive->ai_qp_type, IBV_QPT_RC);
    rdma_freeaddrinfo(passive);

    rdma_addrinfo* active = address_info("127.0.0.1", "7150", RAI_NUMERICHOST);
    ASSERT_NE(active, nullptr);
    ASSERT_NE(active->ai_dst_addr, nullptr);
    EXPECT_EQ(reinterpret_cast<sockaddr_in*>(active->ai_dst_addr)->sin_addr.s_addr,
              htonl(INADDR_LOOPBACK));
    rdma_freeaddrinfo(active);
}

TEST(CmEndpoint, ANumericHostThatIsANameIsAnError)
{
    rdma_addrinfo hints{};
    hints.ai_flags = RAI_NUMERICHOST;
    rdma_addrinfo* info = nullptr;
    EXPECT_NE(rdma_getaddrinfo("localhost", "7150", &hints, &info), 0);
}

TEST(CmEndpoint, GetRequestAcceptAndConnectWaitForTheirEvents)
{
    rdma_addrinfo* passive =
        address_info("127.0.0.1", "0", RAI_PASSIVE | RAI_NUMERICHOST);
    ASSERT_NE(passive, nullptr);
    rdma_cm_id* listen_id = nullptr;
    ASSERT_EQ(rdma_create_ep(&listen_id, passive, nullptr, nullptr), 0)
        << strerror(errno);
    rdma_freeaddrinfo(passive);
    ASSERT_EQ(rdma_listen(listen_id, 0), 0);
    const std::string port = std::to_string(ntohs(rdma_get_src_port(listen_id)));

    int accept_result = -1;
    rdma_cm_id* accepted = nullptr;
    std::thread server([&] {
        if (rdma_get_request(listen_id, &accepted) == 0) {
            rdma_conn_param answer{};
            accept_result = rdma_accept(accepted, &answer);
        }
    });
    rdma_addrinfo* active = address_info("127.0.0.1", port.c_str(), RAI_NUMERICHOST);
    ASSERT_NE(active, nullptr);
    rdma_cm_id* client = nullptr;
    ASSERT_EQ(rdma_create_ep(&client, active, nullptr, nullptr), 0) << strerror(errno);
    rdma_freeaddrinfo(active);
    // Without a QP the synchronous connect returns at CONNECT_RESPONSE.
    rdma_conn_param request{};
    EXPECT_EQ(rdma_connect(client, &request), 0) << strerror(errno);
    ASSERT_NE(client->event, nullptr);
    EXPECT_EQ(client->event->event, RDMA_CM_EVENT_CONNECT_RESPONSE);
    EXPECT_EQ(rdma_establish(client), 0);
    server.join();
    EXPECT_EQ(accept_result, 0) << strerror(errno);
    ASSERT_NE(accepted, nullptr);
    EXPECT_EQ(accepted->event->event, RDMA_CM_EVENT_ESTABLISHED);

    EXPECT_EQ(rdma_disconnect(client), 0);
    rdma_destroy_ep(client);
    rdma_destroy_ep(accepted);
    rdma_destroy_ep(listen_id);
}

TEST(CmEndpoint, ASynchronousConnectToNothingFailsWithEconnrefused)
{
    rdma_addrinfo* passive =
        address_info("127.0.0.1", "0", RAI_PASSIVE | RAI_NUMERICHOST);
    rdma_cm_id* unused = nullptr;
    ASSERT_EQ(rdma_create_ep(&unused, passive, nullptr, nullptr), 0);
    rdma_freeaddrinfo(passive);
    const std::string port = std::to_string(ntohs(rdma_get_src_port(unused)));
    rdma_destroy_ep(unused); // nothing listens on the port now

    rdma_addrinfo* active = address_info("127.0.0.1", port.c_str(), RAI_NUMERICHOST);
    rdma_cm_id* client = nullptr;
    ASSERT_EQ(rdma_create_ep(&client, active, nullptr, nullptr), 0);
    rdma_freeaddrinfo(active);
    errno = 0;
    EXPECT_EQ(rdma_connect(client, nullptr), -1);
    EXPECT_EQ(errno, ECONNREFUSED);
    rdma_destroy_ep(client);
}

} // namespace
