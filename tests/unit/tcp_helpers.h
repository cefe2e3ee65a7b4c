/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Test helpers for SPEAD over TCP on 127.0.0.1: a listening stream, heaps with a
// checkable pattern, a raw client socket, and counts of this process's fds, threads
// and resident memory.

#ifndef INCLUDED_SPEAD_TESTS_TCP_HELPERS_H
#define INCLUDED_SPEAD_TESTS_TCP_HELPERS_H

#include "common/file_descriptor.h"
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_tcp.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace spead_test {

constexpr std::uint64_t tcp_payload_id = 0x1000;

inline std::uint8_t tcp_pattern(std::uint64_t cnt, std::size_t i)
{
    return std::uint8_t((cnt * 131) ^ (i * 7) ^ (i >> 8));
}

/*! A heap of one addressed item, \p size bytes patterned by \p cnt. */
struct pattern_heap {
    pattern_heap(std::uint64_t cnt, std::size_t size) : payload(size)
    {
        for (std::size_t i = 0; i < size; i++)
            payload[i] = tcp_pattern(cnt, i);
        h.add_item(tcp_payload_id, payload.data(), payload.size(), false);
    }
    pattern_heap(const pattern_heap&) = delete;
    std::vector<std::uint8_t> payload;
    gr::spead::send::heap h;
};

/*! The payload item of \p h holds \p cnt's pattern of \p size bytes. */
inline bool
has_pattern(const gr::spead::recv::heap& h, std::uint64_t cnt, std::size_t size)
{
    for (const auto& it : h.items())
        if (it.id == tcp_payload_id) {
            if (it.length != size)
                return false;
            for (std::size_t i = 0; i < size; i++)
                if (it.data[i] != tcp_pattern(cnt, i))
                    return false;
            return true;
        }
    return false;
}

/*! A stream with a tcp_reader on 127.0.0.1 (a free port). */
struct tcp_receiver {
    explicit tcp_receiver(gr::spead::recv::tcp_config config = {},
                          gr::spead::recv::stream_config sc = {})
        : stream(sc),
          reader(stream.emplace_reader<gr::spead::recv::tcp_reader>(
              config.set_endpoint(boost::asio::ip::tcp::endpoint(
                  boost::asio::ip::make_address("127.0.0.1"), 0))))
    {
    }
    unsigned short port() const { return reader.get_bound_endpoint().port(); }
    std::string endpoint() const { return "127.0.0.1:" + std::to_string(port()); }
    gr::spead::recv::stream stream;
    gr::spead::recv::tcp_reader& reader;
};

/*! Pops heaps until none comes for 5 s (the stream ended, or the sender stopped):
 * how many carried \p payload bytes of addressed items with ids from 0x1000. */
inline std::size_t count_data_heaps(gr::spead::recv::stream& stream, std::size_t payload)
{
    std::size_t n = 0;
    gr::spead::recv::heap h;
    while (stream.pop(h, std::chrono::seconds(5)) ==
           gr::spead::recv::stream::pop_result::heap) {
        std::size_t bytes = 0;
        for (const auto& it : h.items())
            if (!it.is_immediate && it.id >= 0x1000)
                bytes += it.length;
        n += bytes == payload;
    }
    return n;
}

/*! A plain TCP client (blocking) connected to 127.0.0.1:port. */
inline gr::spead::file_descriptor raw_connect(unsigned short port)
{
    gr::spead::file_descriptor fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
}

inline void raw_send(int fd, const std::vector<std::uint8_t>& bytes)
{
    EXPECT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), ssize_t(bytes.size()));
}

/*! Entries in a /proc/self directory (fd, task). */
inline std::size_t count_entries(const char* path)
{
    std::size_t n = 0;
    if (DIR* d = opendir(path)) {
        while (readdir(d))
            n++;
        closedir(d);
    }
    return n;
}

/*! This process's resident set, KiB (VmRSS of /proc/self/status). */
inline std::size_t rss_kib()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::size_t(std::stoul(line.substr(6)));
    return 0;
}

/*! Waits up to \p limit for \p condition. */
template <typename F>
bool eventually(F&& condition, std::chrono::milliseconds limit = std::chrono::seconds(10))
{
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (condition())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return condition();
}

} // namespace spead_test

#endif
