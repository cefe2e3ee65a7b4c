/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "endpoint.h"
#include "file_descriptor.h"
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <system_error>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace gr {
namespace spead {
namespace transport {

namespace {

const char* syntax(endpoint_use use)
{
    return use == endpoint_use::receive
               ? "expected ADDRESS[+COUNT]:PORT[,...] with PORT 1-65535, e.g. "
                 "239.1.2.3:7148,239.1.2.4+3:7148 (+3 adds the next three addresses), "
                 "or :7148 for every local address"
               : "expected ADDRESS[+COUNT]:PORT[,...] with PORT 1-65535, e.g. "
                 "239.1.2.3:7148,10.0.0.2+3:7148 (+3 adds the next three addresses)";
}

[[noreturn]] void fail(const std::string& parameter,
                       const std::string& value,
                       const std::string& problem,
                       endpoint_use use)
{
    throw std::invalid_argument(parameter + ": \"" + value + "\" " + problem + "; " +
                                syntax(use));
}

std::string trim(const std::string& s)
{
    const auto begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos)
        return std::string();
    const auto end = s.find_last_not_of(" \t\r\n");
    return s.substr(begin, end - begin + 1);
}

/*! Parses an unsigned decimal number with no sign, spaces or other characters. */
bool parse_decimal(const std::string& s, unsigned long max, unsigned long& out)
{
    if (s.empty() || s.size() > 10)
        return false;
    unsigned long value = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return false;
        value = value * 10 + static_cast<unsigned long>(c - '0');
    }
    if (value > max)
        return false;
    out = value;
    return true;
}

bool looks_numeric(const std::string& s)
{
    return std::all_of(
        s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

bool valid_hostname(const std::string& s)
{
    return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    });
}

struct addrinfo_deleter {
    void operator()(addrinfo* p) const { freeaddrinfo(p); }
};

struct ifaddrs_deleter {
    void operator()(ifaddrs* p) const { freeifaddrs(p); }
};

using ifaddrs_ptr = std::unique_ptr<ifaddrs, ifaddrs_deleter>;

ifaddrs_ptr get_ifaddrs()
{
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0)
        throw std::system_error(errno, std::generic_category(), "getifaddrs");
    return ifaddrs_ptr(list);
}

boost::asio::ip::address_v4 address_of(const ifaddrs& ifa)
{
    const auto* sin = reinterpret_cast<const sockaddr_in*>(ifa.ifa_addr);
    return boost::asio::ip::address_v4(ntohl(sin->sin_addr.s_addr));
}

bool is_ipv4(const ifaddrs& ifa)
{
    return ifa.ifa_addr != nullptr && ifa.ifa_addr->sa_family == AF_INET;
}

/*! "lo (127.0.0.1), eth0 (192.0.2.2)": what the user could have meant. */
std::string list_interfaces(const ifaddrs* list)
{
    std::string out;
    for (const ifaddrs* p = list; p; p = p->ifa_next) {
        if (!is_ipv4(*p))
            continue;
        if (!out.empty())
            out += ", ";
        out += std::string(p->ifa_name) + " (" + address_of(*p).to_string() + ")";
    }
    return out.empty() ? "none with an IPv4 address" : out;
}

/*! Why addresses \p first to \p last (a range, or one address) cannot be used; empty
 * if they can. Multicast is 224.0.0.0/4; 240.0.0.0/4 is reserved and its last address,
 * 255.255.255.255, the limited broadcast, which sockets refuse without SO_BROADCAST. */
std::string address_problem(std::uint32_t first, std::uint32_t last)
{
    const auto text = [](std::uint32_t a) {
        return boost::asio::ip::address_v4(a).to_string();
    };
    const auto multicast = [](std::uint32_t a) { return (a >> 28) == 0xe; };
    const auto reserved = [](std::uint32_t a) { return (a >> 28) == 0xf; };
    if (last == 0xffffffffu)
        return "includes 255.255.255.255, the broadcast address, which is not "
               "supported: give unicast or multicast (224.0.0.0 to 239.255.255.255) "
               "addresses";
    if (multicast(first) != multicast(last))
        return "is a range from " + text(first) + " to " + text(last) +
               " that crosses the edge of the multicast range (224.0.0.0 to "
               "239.255.255.255): give unicast and multicast addresses as separate "
               "entries";
    if (reserved(first) || reserved(last))
        return "includes " + text(reserved(first) ? first : last) +
               ", a reserved address (240.0.0.0/4): give unicast or multicast "
               "(224.0.0.0 to 239.255.255.255) addresses";
    return "";
}

} // namespace

void check_endpoint(const boost::asio::ip::udp::endpoint& ep,
                    const std::string& parameter,
                    endpoint_use use)
{
    const std::string value = ep.address().to_string() + ":" + std::to_string(ep.port());
    if (!ep.address().is_v4())
        fail(parameter, value, "is not IPv4 (SPEAD transports here are IPv4 only)", use);
    if (ep.port() == 0)
        fail(parameter, value, "has port 0", use);
    if (use == endpoint_use::send && ep.address().to_v4().is_unspecified())
        fail(parameter,
             value,
             "has no destination address (0.0.0.0 only makes sense to receive)",
             use);
    const std::uint32_t address = ep.address().to_v4().to_uint();
    const std::string problem = address_problem(address, address);
    if (!problem.empty())
        fail(parameter, value, problem, use);
}

std::vector<boost::asio::ip::udp::endpoint>
parse_endpoints(const std::string& text, const std::string& parameter, endpoint_use use)
{
    using boost::asio::ip::address_v4;
    std::vector<boost::asio::ip::udp::endpoint> out;
    if (trim(text).empty())
        fail(parameter, text, "is empty", use);

    std::size_t pos = 0;
    for (;;) {
        const std::size_t comma = text.find(',', pos);
        const std::string entry = trim(text.substr(
            pos, comma == std::string::npos ? std::string::npos : comma - pos));
        if (entry.empty())
            fail(parameter,
                 text,
                 "has an empty entry (two commas or a trailing comma)",
                 use);

        const std::size_t colon = entry.rfind(':');
        if (colon == std::string::npos)
            fail(parameter, entry, "has no port", use);
        std::string host = trim(entry.substr(0, colon));
        const std::string port_text = trim(entry.substr(colon + 1));
        unsigned long port = 0;
        if (!parse_decimal(port_text, 65535, port) || port == 0)
            fail(parameter, entry, "has a bad port \"" + port_text + "\"", use);

        unsigned long count = 0;
        const std::size_t plus = host.find('+');
        if (plus != std::string::npos) {
            const std::string count_text = trim(host.substr(plus + 1));
            if (!parse_decimal(count_text, max_range_count, count))
                fail(parameter,
                     entry,
                     "has a bad range count \"" + count_text + "\" (0 to " +
                         std::to_string(max_range_count) + ")",
                     use);
            host = trim(host.substr(0, plus));
        }

        address_v4 address; // 0.0.0.0 when the host is empty
        if (!host.empty()) {
            in_addr parsed{};
            if (inet_pton(AF_INET, host.c_str(), &parsed) == 1) {
                address = address_v4(ntohl(parsed.s_addr));
            } else if (looks_numeric(host) || !valid_hostname(host)) {
                fail(parameter, entry, "has a bad IPv4 address \"" + host + "\"", use);
            } else {
                if (plus != std::string::npos)
                    fail(parameter,
                         entry,
                         "gives a range on a hostname; ranges need an IPv4 address",
                         use);
                addrinfo hints{};
                hints.ai_family = AF_INET;
                hints.ai_socktype = SOCK_DGRAM;
                addrinfo* found = nullptr;
                const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
                std::unique_ptr<addrinfo, addrinfo_deleter> guard(found);
                if (rc != 0 || !found)
                    fail(parameter,
                         entry,
                         "names a host that does not resolve to IPv4 (" +
                             std::string(gai_strerror(rc)) + ")",
                         use);
                const auto* sin = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
                address = address_v4(ntohl(sin->sin_addr.s_addr));
            }
        }
        if (address.is_unspecified()) {
            if (use == endpoint_use::send)
                fail(parameter,
                     entry,
                     "has no destination address (0.0.0.0 only makes sense to receive)",
                     use);
            if (count != 0)
                fail(parameter, entry, "gives a range of 0.0.0.0", use);
        }
        const std::uint64_t first = address.to_uint();
        if (first + count > 0xffffffffULL)
            fail(parameter, entry, "has a range that runs past 255.255.255.255", use);
        const std::string problem =
            address_problem(std::uint32_t(first), std::uint32_t(first + count));
        if (!problem.empty())
            fail(parameter, entry, problem, use);
        for (std::uint64_t a = first; a <= first + count; a++)
            out.emplace_back(address_v4(static_cast<address_v4::uint_type>(a)),
                             static_cast<unsigned short>(port));

        if (comma == std::string::npos)
            break;
        pos = comma + 1;
    }
    return out;
}

std::string to_string(const std::vector<boost::asio::ip::udp::endpoint>& endpoints)
{
    std::string out;
    for (const auto& ep : endpoints) {
        if (!out.empty())
            out += ',';
        out += ep.address().to_string() + ":" + std::to_string(ep.port());
    }
    return out;
}

sockaddr_in to_sockaddr(const boost::asio::ip::udp::endpoint& ep)
{
    sockaddr_in out{};
    out.sin_family = AF_INET;
    out.sin_port = htons(ep.port());
    out.sin_addr.s_addr = htonl(ep.address().to_v4().to_uint());
    return out;
}

network_interface resolve_interface(const std::string& text, const std::string& parameter)
{
    const std::string wanted = trim(text);
    const char* expected =
        "give the IPv4 address of a local interface (e.g. 192.168.1.10) "
        "or its netdev name (e.g. eth0)";
    if (wanted.empty())
        throw std::invalid_argument(parameter + ": empty; " + expected);
    const ifaddrs_ptr list = get_ifaddrs();

    in_addr parsed{};
    const bool by_address = inet_pton(AF_INET, wanted.c_str(), &parsed) == 1;
    bool name_exists = false;
    for (const ifaddrs* p = list.get(); p; p = p->ifa_next) {
        if (!by_address && wanted == p->ifa_name)
            name_exists = true;
        if (!is_ipv4(*p))
            continue;
        const bool match = by_address ? address_of(*p).to_uint() == ntohl(parsed.s_addr)
                                      : wanted == p->ifa_name;
        if (!match)
            continue;
        network_interface out;
        out.address = address_of(*p);
        out.name = p->ifa_name;
        out.index = if_nametoindex(p->ifa_name);
        if (out.index == 0)
            throw std::invalid_argument(parameter + ": \"" + wanted + "\": interface " +
                                        out.name + " has no index (" +
                                        std::strerror(errno) + ")");
        return out;
    }
    std::string problem;
    if (by_address)
        problem = "is not the address of a local interface";
    else if (name_exists)
        problem = "has no IPv4 address";
    else if (looks_numeric(wanted))
        problem = "is not an IPv4 address";
    else
        problem = "is not a local interface";
    throw std::invalid_argument(parameter + ": \"" + wanted + "\" " + problem + "; " +
                                expected +
                                ". Interfaces here: " + list_interfaces(list.get()));
}

int interface_mtu(const std::string& name)
{
    file_descriptor fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd)
        throw std::system_error(errno, std::generic_category(), "socket");
    ifreq req{};
    std::strncpy(req.ifr_name, name.c_str(), IFNAMSIZ - 1);
    if (ioctl(fd.get(), SIOCGIFMTU, &req) != 0)
        throw std::system_error(errno, std::generic_category(), "SIOCGIFMTU " + name);
    return req.ifr_mtu;
}

} // namespace transport
} // namespace spead
} // namespace gr
