/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "destination_mac.h"
#include "transport/endpoint.h"
#include "verbs.h"
#include <arpa/inet.h>
#include <net/route.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace gr {
namespace spead {
namespace ibv {

namespace {

using boost::asio::ip::address_v4;
using boost::asio::ip::udp;
using steady = std::chrono::steady_clock;

/*! How long a unicast destination may take to answer ARP. */
constexpr auto neighbour_wait = std::chrono::seconds(1);
/*! UDP discard port: a datagram to it makes the kernel resolve the neighbour. */
constexpr unsigned short discard_port = 9;

/*! Kernel neighbour-table lookup of an IPv4 host's MAC on \p interface_name.
 * \return false when the neighbour is unknown or unresolved */
bool lookup_neighbour(const boost::asio::ip::address_v4& host,
                      const std::string& interface_name,
                      mac_address& out)
{
    // /proc/net/arp: IP address, HW type, Flags, HW address, Mask, Device
    std::ifstream arp("/proc/net/arp");
    std::string line;
    std::getline(arp, line); // header
    const std::string wanted = host.to_string();
    while (std::getline(arp, line)) {
        std::istringstream fields(line);
        std::string ip, hw_type, flags, mac, mask, device;
        if (!(fields >> ip >> hw_type >> flags >> mac >> mask >> device))
            continue;
        if (ip != wanted || (!interface_name.empty() && device != interface_name))
            continue;
        if ((std::stoul(flags, nullptr, 16) & 0x2) == 0) // ATF_COM: resolved
            continue;
        unsigned int b[6];
        if (std::sscanf(mac.c_str(),
                        "%x:%x:%x:%x:%x:%x",
                        &b[0],
                        &b[1],
                        &b[2],
                        &b[3],
                        &b[4],
                        &b[5]) != 6)
            continue;
        for (int i = 0; i < 6; i++)
            out[i] = std::uint8_t(b[i]);
        return true;
    }
    return false;
}

/*!
 * The host whose MAC a frame to \p destination needs: the gateway of the longest
 * matching route of the main table on \p interface_name, or the destination itself
 * when it is on-link (or no route says otherwise).
 */
address_v4 next_hop(const address_v4& destination, const std::string& interface_name)
{
    // Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT; addresses
    // are the raw network-order words printed as native hex.
    std::ifstream routes("/proc/net/route");
    std::string line;
    std::getline(routes, line);
    const std::uint32_t wanted = destination.to_uint();
    int best_prefix = -1;
    unsigned long best_metric = 0;
    std::uint32_t best_gateway = 0;
    while (std::getline(routes, line)) {
        std::istringstream fields(line);
        std::string iface;
        unsigned long dest = 0, gateway = 0, flags = 0, refcnt = 0, use = 0, metric = 0,
                      mask = 0;
        if (!(fields >> iface >> std::hex >> dest >> gateway >> flags >> std::dec >>
              refcnt >> use >> metric >> std::hex >> mask))
            continue;
        if (iface != interface_name || !(flags & RTF_UP))
            continue;
        const std::uint32_t net = ntohl(std::uint32_t(dest));
        const std::uint32_t netmask = ntohl(std::uint32_t(mask));
        if ((wanted & netmask) != (net & netmask))
            continue;
        const int prefix = __builtin_popcount(netmask);
        if (prefix < best_prefix || (prefix == best_prefix && metric >= best_metric))
            continue;
        best_prefix = prefix;
        best_metric = metric;
        best_gateway = (flags & RTF_GATEWAY) ? ntohl(std::uint32_t(gateway)) : 0;
    }
    return best_gateway ? address_v4(best_gateway) : destination;
}

} // namespace

mac_address destination_mac(const udp::endpoint& ep,
                            const transport::network_interface& iface,
                            int socket)
{
    const address_v4 host = ep.address().to_v4();
    if (host.is_multicast())
        return multicast_mac(host.to_uint());
    const address_v4 hop = next_hop(host, iface.name);
    mac_address mac{};
    if (lookup_neighbour(hop, iface.name, mac))
        return mac;
    // Not in the neighbour table yet: a datagram to the discard port makes the kernel
    // ARP for it (through the same route), then the table is read again.
    const sockaddr_in discard = transport::to_sockaddr(udp::endpoint(host, discard_port));
    const auto deadline = steady::now() + neighbour_wait;
    auto next_probe = steady::now();
    while (steady::now() < deadline) {
        if (steady::now() >= next_probe) {
            (void)sendto(socket,
                         nullptr,
                         0,
                         MSG_DONTWAIT,
                         reinterpret_cast<const sockaddr*>(&discard),
                         sizeof(discard));
            next_probe = steady::now() + std::chrono::milliseconds(250);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (lookup_neighbour(hop, iface.name, mac))
            return mac;
    }
    const std::string via = hop == host ? "" : " (via gateway " + hop.to_string() + ")";
    throw_error(
        "endpoints: no MAC address for " + host.to_string() + via + " on " + iface.name,
        EHOSTUNREACH,
        "Raw frames need the destination's Ethernet address from the kernel "
        "neighbour table, and " +
            hop.to_string() +
            " did not answer ARP within 1 s. Check that the host is "
            "up and reachable through " +
            iface.name + " (`ip route get " + host.to_string() + "`, `ip neigh show " +
            hop.to_string() + "`), add a static entry (`ip neigh add " + hop.to_string() +
            " lladdr MAC dev " + iface.name + "`), or send to a multicast group");
}

} // namespace ibv
} // namespace spead
} // namespace gr
