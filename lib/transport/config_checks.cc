/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "transport/config_checks.h"
#include "transport/network_interface.h"
#include "transport/raw_packet.h"
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace transport {

std::vector<boost::asio::ip::udp::endpoint>
checked_endpoints(const std::vector<boost::asio::ip::udp::endpoint>& endpoints,
                  endpoint_use use,
                  ip_family family,
                  const std::string& ipv4_only_fix)
{
    for (const auto& ep : endpoints)
        check_endpoint(ep, "endpoints", use, family, ipv4_only_fix);
    return endpoints;
}

std::size_t checked_max_size(std::size_t bytes)
{
    if (bytes < 64 || bytes > max_udp_payload)
        throw std::invalid_argument(
            "max_size: " + std::to_string(bytes) +
            " bytes is out of range; use 64 to 65507, at least the sender's packet size "
            "(default 9200 suits 9000-byte jumbo frames)");
    return bytes;
}

int checked_ttl(int ttl)
{
    if (ttl < 0 || ttl > 255)
        throw std::invalid_argument("ttl: " + std::to_string(ttl) +
                                    " is out of range; use 0 to 255 (1 = the local "
                                    "network only, the default)");
    return ttl;
}

int checked_max_poll(int max_poll, int default_max_poll)
{
    if (max_poll <= 0)
        throw std::invalid_argument(
            "max_poll: " + std::to_string(max_poll) +
            " must be at least 1 (completion-queue polls per wake-up, or before waiting "
            "or yielding; default " +
            std::to_string(default_max_poll) + ")");
    return max_poll;
}

std::chrono::milliseconds
checked_duration(const char* parameter, std::chrono::milliseconds t, bool zero_ok)
{
    const std::chrono::milliseconds max(10 * 60 * 1000);
    if (t.count() < (zero_ok ? 0 : 1) || t > max)
        throw std::invalid_argument(std::string(parameter) + ": " +
                                    std::to_string(t.count()) +
                                    " ms is out of range; use " + (zero_ok ? "0" : "1") +
                                    " to 600000 ms (10 min)");
    return t;
}

std::string checked_interface(const std::string& address_or_name)
{
    if (!address_or_name.empty())
        resolve_interface(address_or_name, "interface"); // throws if unknown
    return address_or_name;
}

} // namespace transport
} // namespace spead
} // namespace gr
