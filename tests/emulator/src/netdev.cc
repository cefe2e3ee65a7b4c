/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "netdev.h"

#include "unique_fd.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace spead_emu {

std::optional<netdev_facts> query_netdev(const std::string& name)
{
    if (name.empty() || name.size() >= IFNAMSIZ)
        return std::nullopt;
    unique_fd probe(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!probe)
        return std::nullopt;
    ifreq request{};
    auto ask = [&](unsigned long command) {
        memset(&request, 0, sizeof(request));
        memcpy(request.ifr_name, name.c_str(), name.size());
        return ioctl(probe.get(), command, &request) == 0;
    };
    netdev_facts facts;
    facts.name = name;
    if (!ask(SIOCGIFINDEX))
        return std::nullopt;
    facts.ifindex = request.ifr_ifindex;
    if (!ask(SIOCGIFHWADDR))
        return std::nullopt;
    memcpy(facts.mac.data(), request.ifr_hwaddr.sa_data, facts.mac.size());
    if (!ask(SIOCGIFMTU))
        return std::nullopt;
    facts.mtu = request.ifr_mtu;
    if (!ask(SIOCGIFFLAGS))
        return std::nullopt;
    facts.running = (request.ifr_flags & IFF_UP) && (request.ifr_flags & IFF_RUNNING);
    return facts;
}

std::optional<std::string> netdev_owning_ipv4(in_addr address)
{
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0)
        return std::nullopt;
    std::optional<std::string> owner;
    for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
        if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET)
            continue;
        auto* ipv4 = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
        if (ipv4->sin_addr.s_addr == address.s_addr) {
            std::string name = entry->ifa_name;
            owner = name.substr(0, name.find(':')); // "eth0:1" is an alias of eth0
            break;
        }
    }
    freeifaddrs(list);
    return owner;
}

std::vector<std::string> configured_netdevs()
{
    std::vector<std::string> names;
    const char* value = getenv("SPEAD_EMU_NETDEVS");
    if (value == nullptr)
        return names;
    std::string text = value;
    for (char& c : text) {
        if (c == ',' || c == ';')
            c = ' ';
    }
    std::istringstream words(text);
    for (std::string name; words >> name;) {
        bool seen = false;
        for (const auto& earlier : names)
            seen = seen || earlier == name;
        if (!seen)
            names.push_back(name);
    }
    return names;
}

} // namespace spead_emu
