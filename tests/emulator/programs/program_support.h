/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Shared by the traffic test programs: command-line options, interface lookup, the
// payload pattern every sender writes and every receiver verifies, and a tally of what
// arrived.
#ifndef SPEAD_EMU_PROGRAM_SUPPORT_H
#define SPEAD_EMU_PROGRAM_SUPPORT_H

#include <netinet/in.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace emu_programs {

// Exit codes the test scripts check.
constexpr int exit_ok = 0;
constexpr int exit_traffic_mismatch = 1; // ran, but not every datagram arrived intact
constexpr int exit_usage = 2;
constexpr int exit_no_rdma_device = 3;
constexpr int exit_verbs_error = 4;

// "--name value" pairs after a program name (and an optional sub-command).
class options
{
public:
    options(int argc, char** argv, int first);
    std::string text(const std::string& name, const std::string& fallback = "") const;
    long number(const std::string& name, long fallback) const;
    bool has(const std::string& name) const { return m_values.count(name) != 0; }
    // Exits with exit_usage naming the option when it is missing.
    std::string required(const std::string& name) const;

private:
    std::map<std::string, std::string> m_values;
};

using mac_address = std::array<uint8_t, 6>;

struct interface_info {
    std::string netdev;
    in_addr address{};
    mac_address mac{};
    int mtu = 0;
};

// Accepts an IPv4 address or a netdev name, as the product's interface option does.
bool resolve_interface(const std::string& name_or_address,
                       interface_info& info,
                       std::string& error);
// The interface --interface names (required); exits with exit_usage, saying why after
// the program's name, when it names none of this host's.
interface_info interface_option(const options& args, const char* program);
bool parse_endpoint(const std::string& text, in_addr& address, uint16_t& port);
bool parse_mac(const std::string& text, mac_address& mac);
// 01:00:5e plus the low 23 bits of the group.
mac_address multicast_mac(in_addr group);
bool is_multicast(in_addr address);
// The kernel's neighbour entry for an address on an interface, if it has one.
bool neighbour_mac(const std::string& netdev, in_addr address, mac_address& mac);

// Payload of datagram `sequence`: the sequence number (8 bytes, big endian), then bytes
// that depend on it and their position, so misplaced or stale data is caught.
constexpr size_t minimum_payload = 8;
void fill_payload(uint8_t* payload, size_t size, uint64_t sequence);
bool check_payload(const uint8_t* payload, size_t size, uint64_t& sequence);

// Counts distinct, duplicate and corrupt datagrams of a run of `expected`.
class arrival_tally
{
public:
    explicit arrival_tally(uint64_t expected) : m_seen(expected, false) {}
    void record(const uint8_t* payload, size_t size, size_t expected_size);
    bool complete() const { return m_distinct == m_seen.size() && m_corrupt == 0; }
    uint64_t distinct() const { return m_distinct; }
    std::string summary() const;

private:
    std::vector<bool> m_seen;
    uint64_t m_distinct = 0;
    uint64_t m_duplicates = 0;
    uint64_t m_corrupt = 0;
};

// Creates the file (a test script waits for it before it starts sending).
void announce_ready(const std::string& path);

using steady_clock = std::chrono::steady_clock;

} // namespace emu_programs

#endif
