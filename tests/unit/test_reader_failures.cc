/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// A kernel-socket reader whose socket fails under it ends its stream: the failure is
// counted in reader_errors, the consumer's pop() says `stopped` instead of waiting for
// datagrams that will never come, and heaps that arrived before are still delivered.
// (Captures: tests/apps/test_spead_recv.py and qa_source_pcap.py; ibverbs:
// tests/integration/ibv/udp_ibv_reader_test.cc.)

#include "free_port.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_udp.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string>
#include <vector>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;
using spead_test::free_udp_port;

/*! The descriptor of this process's UDP socket bound to \p port (-1 if none). */
int socket_bound_to(std::uint16_t port)
{
    int found = -1;
    DIR* dir = opendir("/proc/self/fd");
    if (!dir)
        return -1;
    while (dirent* entry = readdir(dir)) {
        const int fd = std::atoi(entry->d_name);
        if (fd <= 2 || fd == dirfd(dir))
            continue;
        sockaddr_in address{};
        socklen_t len = sizeof(address);
        int type = 0;
        socklen_t type_len = sizeof(type);
        if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &len) == 0 &&
            address.sin_family == AF_INET && ntohs(address.sin_port) == port &&
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) == 0 &&
            type == SOCK_DGRAM)
            found = fd;
    }
    closedir(dir);
    return found;
}

/*! Sends \p heaps one-packet heaps of 64 bytes to 127.0.0.1:\p port. */
void send_heaps(std::uint16_t port, int heaps)
{
    boost::asio::io_context io;
    send::udp_stream out(
        io,
        send::stream_config(),
        send::udp_config().set_endpoints("127.0.0.1:" + std::to_string(port)));
    std::vector<std::uint8_t> payload(64, 7);
    for (int i = 0; i < heaps; i++) {
        send::heap h;
        h.add_item(0x1000, payload.data(), payload.size(), false);
        out.send_heap(h, i + 1);
    }
}

TEST(UdpReaderFailure, ASocketThatCannotBeReadEndsTheStreamAndIsCounted)
{
    recv::stream s(recv::stream_config().set_queue_heaps(16));
    const std::uint16_t port = free_udp_port();
    s.emplace_reader<recv::udp_reader>(
        recv::udp_config().set_endpoints("127.0.0.1:" + std::to_string(port)));
    send_heaps(port, 3);
    recv::heap h;
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(s.pop(h, 5s), recv::stream::pop_result::heap);
        EXPECT_EQ(h.cnt(), std::uint64_t(i + 1));
    }

    // Something else in the process breaks the descriptor under the reader: it now
    // names /dev/null, which poll() reports readable and recvmmsg() refuses.
    const int fd = socket_bound_to(port);
    ASSERT_GE(fd, 0);
    const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(null_fd, 0);
    ASSERT_EQ(dup2(null_fd, fd), fd);
    close(null_fd);

    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(s.pop(h, 5s), recv::stream::pop_result::stopped);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    EXPECT_TRUE(s.has_failed());
    EXPECT_NE(s.get_failure().find("recvmmsg on 127.0.0.1:" + std::to_string(port)),
              std::string::npos)
        << s.get_failure();
    EXPECT_NE(s.get_failure().find("make the source again"), std::string::npos);
    const recv_stats stats = s.get_stats();
    EXPECT_EQ(stats[recv_stat::reader_errors], 1u);
    EXPECT_EQ(stats[recv_stat::heaps], 3u);
    s.stop(); // returns although the reader's loop is long gone
    EXPECT_EQ(s.get_stats()[recv_stat::reader_errors], 1u);
}

TEST(UdpReaderFailure, StoppingAHealthyReaderIsNoFailure)
{
    recv::stream s;
    s.emplace_reader<recv::udp_reader>(
        recv::udp_config().set_endpoints("127.0.0.1:" + std::to_string(free_udp_port())));
    s.stop();
    recv::heap h;
    EXPECT_EQ(s.pop(h, 1s), recv::stream::pop_result::stopped);
    EXPECT_FALSE(s.has_failed());
    EXPECT_EQ(s.get_stats()[recv_stat::reader_errors], 0u);
}

} // namespace
