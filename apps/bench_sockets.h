/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_SOCKETS_H
#define INCLUDED_SPEAD_APPS_BENCH_SOCKETS_H

// spead_bench's loopback plumbing: the net.core.rmem_max sysctl a receive buffer
// needs, a UDP socket that never reads, and a free port.

#include <cstddef>
#include <cstdint>
#include <string>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

/*!
 * Lifts net.core.rmem_max to at least \p bytes while it lives (root only), so that a
 * socket made meanwhile gets the receive buffer asked for; restores the old value on
 * destruction, so the rest of the machine keeps its setting. The cap only applies
 * when a socket sets SO_RCVBUF, so a short scope around socket creation is enough.
 */
class rmem_max_raise
{
public:
    explicit rmem_max_raise(std::size_t bytes);
    ~rmem_max_raise();
    rmem_max_raise(const rmem_max_raise&) = delete;
    rmem_max_raise& operator=(const rmem_max_raise&) = delete;

    std::size_t original() const { return d_original; }
    /*! The cap while this object lives. */
    std::size_t effective() const { return d_effective; }

private:
    std::size_t d_original = 0;
    std::size_t d_effective = 0;
    bool d_raised = false;
};

/*! net.core.rmem_max, bytes (0 if unreadable). */
std::size_t read_rmem_max();

/*! "receive buffer: asked 8388608 bytes, net.core.rmem_max 4194304 (raised to
 * 8388608 while the socket was made, as root), granted 8388608" */
std::string describe_receive_buffer(std::size_t asked,
                                    const rmem_max_raise& raise,
                                    std::size_t granted);

/*! A UDP socket on 127.0.0.1 that never reads: the kernel queues what fits and drops
 * the rest, counting it. The cheapest receiver a loopback sender can have. */
class discard_socket
{
public:
    /*! \throws std::system_error */
    discard_socket();
    ~discard_socket();
    discard_socket(const discard_socket&) = delete;
    discard_socket& operator=(const discard_socket&) = delete;

    unsigned short port() const { return d_port; }
    /*! Datagrams the kernel dropped because the buffer was full (SK_MEMINFO_DROPS). */
    std::uint64_t drops() const;

private:
    int d_fd = -1;
    unsigned short d_port = 0;
};

/*! A port on 127.0.0.1 that was free a moment ago. */
unsigned short free_udp_port();

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
