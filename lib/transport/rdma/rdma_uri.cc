/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rdma_uri.h"
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cstdlib>
#include <stdexcept>

namespace gr {
namespace spead {
namespace rdma {

namespace {
constexpr const char scheme[] = "verbs://";

[[noreturn]] void
bad(const std::string& parameter, const std::string& text, const std::string& why)
{
    throw std::invalid_argument(parameter + ": \"" + text + "\" " + why +
                                "; write verbs://HOST:PORT (e.g. verbs://10.0.0.2:7150, "
                                "or verbs://:7150 to listen on every address)");
}
} // namespace

uri parse_uri(const std::string& text, const std::string& parameter, bool host_optional)
{
    const std::string prefix(scheme);
    if (text.compare(0, prefix.size(), prefix) != 0)
        bad(parameter, text, "is not a verbs:// URI");
    const std::string rest = text.substr(prefix.size());
    const auto colon = rest.rfind(':');
    if (colon == std::string::npos)
        bad(parameter, text, "has no port");
    uri u;
    u.host = rest.substr(0, colon);
    const std::string port = rest.substr(colon + 1);
    if (u.host.find_first_of(":/[]@ ") != std::string::npos)
        bad(parameter, text, "has a host that is not an IPv4 address or a name");
    if (u.host.empty() && !host_optional)
        bad(parameter, text, "names no host to connect to");
    char* end = nullptr;
    const unsigned long p = port.empty() ? 0 : std::strtoul(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p < 1 || p > 65535 ||
        port.find_first_not_of("0123456789") != std::string::npos)
        bad(parameter, text, "has port \"" + port + "\", not 1 to 65535");
    u.port = std::uint16_t(p);
    return u;
}

boost::asio::ip::address_v4 resolve_host(const std::string& host,
                                         const std::string& parameter)
{
    addrinfo hints{};
    hints.ai_family = AF_INET;
    addrinfo* found = nullptr;
    const int r = getaddrinfo(host.c_str(), nullptr, &hints, &found);
    if (r != 0 || !found)
        throw std::invalid_argument(
            parameter + ": host \"" + host + "\" does not resolve to an IPv4 address (" +
            gai_strerror(r) + "); check the name, or give the address");
    const auto* sin = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
    const boost::asio::ip::address_v4 a(ntohl(sin->sin_addr.s_addr));
    freeaddrinfo(found);
    return a;
}

std::string to_string(const uri& u)
{
    return std::string(scheme) + u.host + ":" + std::to_string(u.port);
}

} // namespace rdma
} // namespace spead
} // namespace gr
