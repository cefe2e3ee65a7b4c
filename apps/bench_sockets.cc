/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_sockets.h"
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>
#include <cerrno>
#include <fstream>
#include <sstream>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {
const char* const rmem_max_path = "/proc/sys/net/core/rmem_max";

bool write_rmem_max(std::size_t bytes)
{
    std::ofstream out(rmem_max_path);
    out << bytes << "\n";
    out.flush();
    return bool(out);
}
} // namespace

std::size_t read_rmem_max()
{
    std::ifstream in(rmem_max_path);
    std::size_t value = 0;
    in >> value;
    return value;
}

rmem_max_raise::rmem_max_raise(std::size_t bytes)
    : d_original(read_rmem_max()), d_effective(d_original)
{
    if (d_original == 0 || d_original >= bytes || geteuid() != 0)
        return;
    if (write_rmem_max(bytes)) {
        d_raised = true;
        d_effective = bytes;
    }
}

rmem_max_raise::~rmem_max_raise()
{
    if (d_raised)
        write_rmem_max(d_original);
}

std::string describe_receive_buffer(std::size_t asked,
                                    const rmem_max_raise& raise,
                                    std::size_t granted)
{
    std::ostringstream out;
    out << "receive socket buffer: asked " << asked << " bytes, net.core.rmem_max "
        << raise.original();
    if (raise.effective() != raise.original())
        out << " (raised to " << raise.effective()
            << " while the socket was made, as root, then restored)";
    else if (raise.original() < asked)
        out << " (not raised: run as root to lift it)";
    out << ", granted " << granted;
    return out.str();
}

discard_socket::discard_socket()
{
    d_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (d_fd < 0)
        throw std::system_error(errno, std::generic_category(), "socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(d_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(d_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        const int err = errno;
        close(d_fd);
        throw std::system_error(err, std::generic_category(), "bind 127.0.0.1:0");
    }
    d_port = ntohs(addr.sin_port);
}

discard_socket::~discard_socket() { close(d_fd); }

std::uint64_t discard_socket::drops() const
{
    std::uint32_t meminfo[SK_MEMINFO_VARS] = {};
    socklen_t len = sizeof(meminfo);
    if (getsockopt(d_fd, SOL_SOCKET, SO_MEMINFO, meminfo, &len) != 0)
        return 0;
    return meminfo[SK_MEMINFO_DROPS];
}

unsigned short free_udp_port()
{
    discard_socket probe;
    return probe.port();
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
