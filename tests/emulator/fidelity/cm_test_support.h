/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What the rdma_cm fidelity tests share: owned channels and ids, waiting for the next
// event on a channel's fd (poll, then rdma_get_cm_event) and a listener on loopback.
#ifndef SPEAD_EMU_CM_TEST_SUPPORT_H
#define SPEAD_EMU_CM_TEST_SUPPORT_H

#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <poll.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace cm_test {

struct channel_deleter {
    void operator()(rdma_event_channel* channel) const
    {
        rdma_destroy_event_channel(channel);
    }
};
using channel_ptr = std::unique_ptr<rdma_event_channel, channel_deleter>;
struct id_deleter {
    void operator()(rdma_cm_id* id) const { rdma_destroy_id(id); }
};
using id_ptr = std::unique_ptr<rdma_cm_id, id_deleter>;

inline channel_ptr make_channel()
{
    channel_ptr channel(rdma_create_event_channel());
    EXPECT_NE(channel, nullptr) << "rdma_create_event_channel: " << strerror(errno);
    return channel;
}

inline id_ptr make_id(rdma_event_channel* channel, void* context = nullptr)
{
    rdma_cm_id* id = nullptr;
    EXPECT_EQ(rdma_create_id(channel, &id, context, RDMA_PS_TCP), 0) << strerror(errno);
    return id_ptr(id);
}

inline sockaddr_in ipv4(const char* address, uint16_t port)
{
    sockaddr_in result{};
    result.sin_family = AF_INET;
    result.sin_port = htons(port);
    inet_pton(AF_INET, address, &result.sin_addr);
    return result;
}

// rdma_resolve_addr from no source to address:port (the routing picks the source).
inline int start_resolving(rdma_cm_id* id, const char* address, uint16_t port)
{
    sockaddr_in destination = ipv4(address, port);
    return rdma_resolve_addr(
        id, nullptr, reinterpret_cast<sockaddr*>(&destination), 2000);
}

// An event copied out of the channel (and acknowledged).
struct event_copy {
    rdma_cm_event_type type = RDMA_CM_EVENT_MULTICAST_ERROR; // "none"
    int status = 0;
    rdma_cm_id* id = nullptr;
    rdma_cm_id* listen_id = nullptr;
    rdma_conn_param param{};
    std::vector<uint8_t> private_data;
};

// Waits on the fd (as an application's event loop does) for at most timeout_ms.
inline event_copy next_event(rdma_event_channel* channel, int timeout_ms = 10000)
{
    event_copy copy;
    pollfd ready{ channel->fd, POLLIN, 0 };
    if (poll(&ready, 1, timeout_ms) != 1) {
        ADD_FAILURE() << "no CM event within " << timeout_ms << " ms";
        return copy;
    }
    rdma_cm_event* event = nullptr;
    if (rdma_get_cm_event(channel, &event) != 0) {
        ADD_FAILURE() << "rdma_get_cm_event: " << strerror(errno);
        return copy;
    }
    copy.type = event->event;
    copy.status = event->status;
    copy.id = event->id;
    copy.listen_id = event->listen_id;
    copy.param = event->param.conn;
    const auto* data = static_cast<const uint8_t*>(event->param.conn.private_data);
    if (data != nullptr)
        copy.private_data.assign(data, data + event->param.conn.private_data_len);
    copy.param.private_data = nullptr;
    EXPECT_EQ(rdma_ack_cm_event(event), 0);
    return copy;
}

inline event_copy expect_event(rdma_event_channel* channel, rdma_cm_event_type type)
{
    event_copy event = next_event(channel);
    EXPECT_EQ(event.type, type)
        << "got " << rdma_event_str(event.type) << " (status " << event.status
        << ") instead of " << rdma_event_str(type);
    return event;
}

// A listener on 127.0.0.1 with a port the kernel picked.
struct listener {
    channel_ptr channel = make_channel();
    id_ptr id = make_id(channel.get());
    uint16_t port = 0;

    listener()
    {
        sockaddr_in address = ipv4("127.0.0.1", 0);
        EXPECT_EQ(rdma_bind_addr(id.get(), reinterpret_cast<sockaddr*>(&address)), 0)
            << strerror(errno);
        EXPECT_EQ(rdma_listen(id.get(), 8), 0) << strerror(errno);
        port = ntohs(rdma_get_src_port(id.get()));
        EXPECT_NE(port, 0);
    }
};

// An active id on its own channel, resolved to 127.0.0.1:port.
struct connector {
    channel_ptr channel = make_channel();
    id_ptr id = make_id(channel.get());

    explicit connector(uint16_t port)
    {
        EXPECT_EQ(start_resolving(id.get(), "127.0.0.1", port), 0);
        expect_event(channel.get(), RDMA_CM_EVENT_ADDR_RESOLVED);
        EXPECT_EQ(rdma_resolve_route(id.get(), 2000), 0);
        expect_event(channel.get(), RDMA_CM_EVENT_ROUTE_RESOLVED);
    }
};

// rdma_connect with default parameters; the CONNECT_REQUEST the listener gets.
inline event_copy connect_and_receive(connector& client, listener& server)
{
    rdma_conn_param request{};
    EXPECT_EQ(rdma_connect(client.id.get(), &request), 0);
    return expect_event(server.channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST);
}

inline std::vector<uint8_t> pattern(size_t length, uint8_t seed)
{
    std::vector<uint8_t> bytes(length);
    for (size_t i = 0; i < length; i++)
        bytes[i] = static_cast<uint8_t>(seed + i);
    return bytes;
}

} // namespace cm_test

#endif
