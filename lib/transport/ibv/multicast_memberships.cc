/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "multicast_memberships.h"
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cerrno>

namespace gr {
namespace spead {
namespace ibv {

multicast_memberships::multicast_memberships(
    const device_binding& device,
    const std::vector<boost::asio::ip::udp::endpoint>& endpoints)
{
    // The NIC steers multicast by flow; the kernel only has to tell the switch (IGMP)
    // that this host wants the groups. A socket holds a limited number of memberships
    // (net.ipv4.igmp_max_memberships, 20 by default): open another when one is full.
    const unsigned int ifindex = if_nametoindex(device.interface_name().c_str());
    for (const auto& ep : endpoints) {
        if (!ep.address().is_multicast())
            continue;
        ip_mreqn request{};
        request.imr_multiaddr.s_addr = htonl(ep.address().to_v4().to_uint());
        request.imr_address.s_addr = htonl(device.interface_address().to_uint());
        request.imr_ifindex = int(ifindex);
        for (int attempt = 0;; attempt++) {
            if (d_sockets.empty() || attempt > 0) {
                file_descriptor fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
                if (!fd)
                    throw_error("socket for multicast membership", errno);
                d_sockets.push_back(std::move(fd));
            }
            if (setsockopt(d_sockets.back().get(),
                           IPPROTO_IP,
                           IP_ADD_MEMBERSHIP,
                           &request,
                           sizeof(request)) == 0)
                break;
            const int err = errno;
            if (err == EADDRINUSE)
                break; // already a member (the same group on another port)
            if (err != ENOBUFS || attempt > 0)
                throw_error("joining multicast group " + ep.address().to_string() +
                                " on " + device.interface_name(),
                            err);
        }
    }
}

} // namespace ibv
} // namespace spead
} // namespace gr
