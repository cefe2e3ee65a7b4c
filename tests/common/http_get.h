/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TESTS_HTTP_GET_H
#define INCLUDED_SPEAD_TESTS_HTTP_GET_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cstdint>
#include <string>

namespace spead_test {

/*! GET \p path from 127.0.0.1:\p port over HTTP/1.0: the whole response, or "" when
 * the connection is refused. */
inline std::string http_get(std::uint16_t port, const std::string& path = "/metrics")
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        ::close(fd);
        return "";
    }
    const std::string request =
        "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    (void)!::write(fd, request.data(), request.size());
    std::string response;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof(buffer))) > 0)
        response.append(buffer, static_cast<std::size_t>(n));
    ::close(fd);
    return response;
}

} // namespace spead_test

#endif /* INCLUDED_SPEAD_TESTS_HTTP_GET_H */
