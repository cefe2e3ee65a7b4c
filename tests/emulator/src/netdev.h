/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What the emulator needs to know about the Linux network interfaces it stands on.
#ifndef SPEAD_EMU_NETDEV_H
#define SPEAD_EMU_NETDEV_H

#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spead_emu {

using mac_address = std::array<uint8_t, 6>;

struct netdev_facts {
    std::string name;
    int ifindex = 0;
    mac_address mac{};
    int mtu = 0;
    bool running = false; // IFF_UP and IFF_RUNNING: the port is ACTIVE
};

// Looks the interface up in the caller's network namespace; nullopt if it does not exist.
std::optional<netdev_facts> query_netdev(const std::string& name);

// The interface that owns an IPv4 address (as rdma_cm's kernel side resolves it), or
// nullopt when no interface has it.
std::optional<std::string> netdev_owning_ipv4(in_addr address);

// SPEAD_EMU_NETDEVS: the interfaces that get an emulated device, comma separated.
std::vector<std::string> configured_netdevs();

} // namespace spead_emu

#endif
