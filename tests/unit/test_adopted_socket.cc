/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Readers and streams on a socket their caller made (spead2's socket forms):
// transport::adopt_socket's checks, and a udp and a tcp round trip over sockets the
// test makes and closes at once.

#include "common/file_descriptor.h"
#include "transport/adopted_socket.h"
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_tcp.h>
#include <gnuradio/spead/send_udp.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;

file_descriptor make_socket(int type)
{
    return file_descriptor(::socket(AF_INET, type, 0));
}

/*! Binds \p fd to 127.0.0.1 and a port the kernel picks; returns the port. */
unsigned short bind_loopback(int fd)
{
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    return ntohs(addr.sin_port);
}

/*! Sends a heap of 3000 bytes and the stop heap; checks that \p receiver gets it. */
void round_trip(send::stream& sender, recv::stream& receiver)
{
    std::vector<std::uint8_t> data(3000);
    std::iota(data.begin(), data.end(), 0);
    send::heap h;
    h.add_item(0x1000, data.data(), data.size());
    sender.send_heap(h);
    send::heap end;
    end.add_end();
    sender.send_heap(end);
    recv::heap got;
    ASSERT_EQ(receiver.pop(got, 10s), recv::stream::pop_result::heap);
    const recv::item* it = got.find(0x1000);
    ASSERT_NE(it, nullptr);
    EXPECT_EQ(std::vector<std::uint8_t>(it->data, it->data + it->length), data);
    EXPECT_EQ(receiver.pop(got, 10s), recv::stream::pop_result::stopped);
}

} // namespace

TEST(adopt_socket, refuses_a_socket_of_the_wrong_kind_naming_the_parameter)
{
    auto udp = make_socket(SOCK_DGRAM);
    auto tcp = make_socket(SOCK_STREAM);
    using transport::socket_role;
    for (auto [fd, role] : { std::pair{ udp.get(), socket_role::bound_udp },
                             std::pair{ tcp.get(), socket_role::udp },
                             std::pair{ udp.get(), socket_role::listening },
                             std::pair{ tcp.get(), socket_role::listening },
                             std::pair{ tcp.get(), socket_role::connected },
                             std::pair{ -1, socket_role::udp } }) {
        try {
            transport::adopt_socket(fd, role, "the_socket");
            ADD_FAILURE() << "descriptor " << fd << " accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("the_socket: descriptor"),
                      std::string::npos)
                << e.what();
        }
    }
}

TEST(adopt_socket, gives_a_non_blocking_duplicate)
{
    auto udp = make_socket(SOCK_DGRAM);
    bind_loopback(udp.get());
    auto copy =
        transport::adopt_socket(udp.get(), transport::socket_role::bound_udp, "s");
    EXPECT_NE(copy.get(), udp.get());
    EXPECT_TRUE(::fcntl(copy.get(), F_GETFL) & O_NONBLOCK);
    EXPECT_TRUE(::fcntl(copy.get(), F_GETFD) & FD_CLOEXEC);
}

TEST(adopted_socket, udp_reader_and_stream_on_sockets_closed_by_their_maker)
{
    recv::stream receiver;
    unsigned short port;
    {
        auto fd = make_socket(SOCK_DGRAM);
        port = bind_loopback(fd.get());
        auto& r = receiver.emplace_reader<recv::udp_reader>(fd.get(), recv::udp_config());
        ASSERT_EQ(r.get_bound_endpoints().size(), 1u);
        EXPECT_EQ(r.get_bound_endpoints()[0].port(), port);
    }
    boost::asio::io_context io;
    send::udp_config udp;
    udp.set_endpoints("127.0.0.1:" + std::to_string(port));
    auto fd = make_socket(SOCK_DGRAM);
    send::udp_stream sender(io, send::stream_config(), fd.get(), udp);
    fd.reset();
    round_trip(sender, receiver);
}

TEST(adopted_socket, tcp_reader_and_stream_on_sockets_closed_by_their_maker)
{
    recv::stream receiver;
    unsigned short port;
    {
        auto acceptor = make_socket(SOCK_STREAM);
        port = bind_loopback(acceptor.get());
        ASSERT_EQ(::listen(acceptor.get(), 1), 0);
        auto& r =
            receiver.emplace_reader<recv::tcp_reader>(acceptor.get(), recv::tcp_config());
        EXPECT_EQ(r.get_bound_endpoint().port(), port);
    }
    auto fd = make_socket(SOCK_STREAM);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    ASSERT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    boost::asio::io_context io;
    send::tcp_stream sender(io, send::stream_config(), fd.get(), send::tcp_config());
    fd.reset();
    round_trip(sender, receiver);
}
