/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TESTS_FREE_PORT_H
#define INCLUDED_SPEAD_TESTS_FREE_PORT_H

#include "common/file_descriptor.h"
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace spead_test {

/*! A UDP port nobody listens on right now on 127.0.0.1 (the kernel's pick for a
 * throwaway socket). */
inline unsigned short free_udp_port()
{
    gr::spead::file_descriptor fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
    return ntohs(addr.sin_port);
}

} // namespace spead_test

#endif /* INCLUDED_SPEAD_TESTS_FREE_PORT_H */
