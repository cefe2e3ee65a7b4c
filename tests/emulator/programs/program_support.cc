/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "program_support.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace emu_programs {

options::options(int argc, char** argv, int first)
{
    for (int i = first; i < argc; i++) {
        const std::string word = argv[i];
        if (word.rfind("--", 0) != 0) {
            fprintf(stderr, "unexpected argument %s\n", word.c_str());
            exit(exit_usage);
        }
        // A flag without value is followed by another option or nothing.
        if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
            m_values[word.substr(2)] = argv[++i];
        else
            m_values[word.substr(2)] = "1";
    }
}

std::string options::text(const std::string& name, const std::string& fallback) const
{
    const auto found = m_values.find(name);
    return found == m_values.end() ? fallback : found->second;
}

long options::number(const std::string& name, long fallback) const
{
    const auto found = m_values.find(name);
    return found == m_values.end() ? fallback : strtol(found->second.c_str(), nullptr, 0);
}

std::string options::required(const std::string& name) const
{
    if (!has(name)) {
        fprintf(stderr, "missing option --%s\n", name.c_str());
        exit(exit_usage);
    }
    return text(name);
}

bool resolve_interface(const std::string& name_or_address,
                       interface_info& info,
                       std::string& error)
{
    in_addr wanted{};
    const bool by_address = inet_pton(AF_INET, name_or_address.c_str(), &wanted) == 1;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) {
        error = std::string("getifaddrs: ") + strerror(errno);
        return false;
    }
    bool found = false;
    for (ifaddrs* entry = list; entry != nullptr && !found; entry = entry->ifa_next) {
        if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET)
            continue;
        const in_addr address = reinterpret_cast<sockaddr_in*>(entry->ifa_addr)->sin_addr;
        if (by_address ? address.s_addr == wanted.s_addr
                       : name_or_address == entry->ifa_name) {
            info.netdev = entry->ifa_name;
            info.address = address;
            found = true;
        }
    }
    freeifaddrs(list);
    if (!found) {
        error = "no interface has " + name_or_address;
        return false;
    }
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ifreq request{};
    snprintf(request.ifr_name, IFNAMSIZ, "%s", info.netdev.c_str());
    if (ioctl(fd, SIOCGIFHWADDR, &request) == 0)
        memcpy(info.mac.data(), request.ifr_hwaddr.sa_data, 6);
    if (ioctl(fd, SIOCGIFMTU, &request) == 0)
        info.mtu = request.ifr_mtu;
    close(fd);
    return true;
}

interface_info interface_option(const options& args, const char* program)
{
    interface_info interface;
    std::string error;
    if (!resolve_interface(args.required("interface"), interface, error)) {
        fprintf(stderr, "%s: %s\n", program, error.c_str());
        exit(exit_usage);
    }
    return interface;
}

bool parse_endpoint(const std::string& text, in_addr& address, uint16_t& port)
{
    const auto colon = text.rfind(':');
    if (colon == std::string::npos)
        return false;
    port = static_cast<uint16_t>(strtoul(text.c_str() + colon + 1, nullptr, 10));
    return inet_pton(AF_INET, text.substr(0, colon).c_str(), &address) == 1 && port != 0;
}

bool parse_mac(const std::string& text, mac_address& mac)
{
    unsigned bytes[6];
    if (sscanf(text.c_str(),
               "%x:%x:%x:%x:%x:%x",
               &bytes[0],
               &bytes[1],
               &bytes[2],
               &bytes[3],
               &bytes[4],
               &bytes[5]) != 6)
        return false;
    for (int i = 0; i < 6; i++)
        mac[i] = static_cast<uint8_t>(bytes[i]);
    return true;
}

mac_address multicast_mac(in_addr group)
{
    const uint32_t host = ntohl(group.s_addr);
    return { 0x01,
             0x00,
             0x5e,
             static_cast<uint8_t>((host >> 16) & 0x7f),
             static_cast<uint8_t>(host >> 8),
             static_cast<uint8_t>(host) };
}

bool is_multicast(in_addr address) { return IN_MULTICAST(ntohl(address.s_addr)); }

bool neighbour_mac(const std::string& netdev, in_addr address, mac_address& mac)
{
    arpreq request{};
    auto* protocol = reinterpret_cast<sockaddr_in*>(&request.arp_pa);
    protocol->sin_family = AF_INET;
    protocol->sin_addr = address;
    snprintf(request.arp_dev, sizeof(request.arp_dev), "%s", netdev.c_str());
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const bool found =
        ioctl(fd, SIOCGARP, &request) == 0 && (request.arp_flags & ATF_COM);
    close(fd);
    if (found)
        memcpy(mac.data(), request.arp_ha.sa_data, 6);
    return found;
}

void fill_payload(uint8_t* payload, size_t size, uint64_t sequence)
{
    for (int i = 0; i < 8; i++)
        payload[i] = static_cast<uint8_t>(sequence >> (56 - 8 * i));
    for (size_t i = minimum_payload; i < size; i++)
        payload[i] = static_cast<uint8_t>(sequence * 31 + i);
}

bool check_payload(const uint8_t* payload, size_t size, uint64_t& sequence)
{
    if (size < minimum_payload)
        return false;
    sequence = 0;
    for (int i = 0; i < 8; i++)
        sequence = sequence << 8 | payload[i];
    for (size_t i = minimum_payload; i < size; i++) {
        if (payload[i] != static_cast<uint8_t>(sequence * 31 + i))
            return false;
    }
    return true;
}

void arrival_tally::record(const uint8_t* payload, size_t size, size_t expected_size)
{
    uint64_t sequence = 0;
    if (size != expected_size || !check_payload(payload, size, sequence) ||
        sequence >= m_seen.size()) {
        m_corrupt++;
        return;
    }
    if (m_seen[sequence]) {
        m_duplicates++;
        return;
    }
    m_seen[sequence] = true;
    m_distinct++;
}

std::string arrival_tally::summary() const
{
    char text[160];
    snprintf(text,
             sizeof(text),
             "%llu of %zu datagrams arrived intact, %llu duplicate, %llu corrupt",
             static_cast<unsigned long long>(m_distinct),
             m_seen.size(),
             static_cast<unsigned long long>(m_duplicates),
             static_cast<unsigned long long>(m_corrupt));
    return text;
}

void announce_ready(const std::string& path)
{
    if (!path.empty())
        std::ofstream(path) << "ready\n";
}

} // namespace emu_programs
