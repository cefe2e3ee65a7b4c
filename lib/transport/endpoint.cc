/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "common/file_descriptor.h"
#include "endpoint.h"
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace gr {
namespace spead {
namespace transport {

namespace {

const char* syntax(endpoint_use use, ip_family family)
{
    if (family == ip_family::ipv4_or_ipv6)
        return use == endpoint_use::receive
                   ? "expected ADDRESS[+COUNT]:PORT[,...] with PORT 1-65535, e.g. "
                     "239.1.2.3:7148,239.1.2.4+3:7148 (+3 adds the next three "
                     "addresses), [::1]:7148 or ff14::1:7148 (IPv6), or :7148 for every "
                     "local address ([::]:7148 for every IPv6 one)"
                   : "expected ADDRESS[+COUNT]:PORT[,...] with PORT 1-65535, e.g. "
                     "239.1.2.3:7148,10.0.0.2+3:7148 (+3 adds the next three "
                     "addresses), [::1]:7148 or ff14::1:7148 (IPv6)";
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
                       endpoint_use use,
                       ip_family family = ip_family::ipv4)
{
    throw std::invalid_argument(parameter + ": \"" + value + "\" " + problem + "; " +
                                syntax(use, family));
}

/*! The error for an IPv6 endpoint where only IPv4 is taken. */
[[noreturn]] void fail_ipv6(const std::string& parameter,
                            const std::string& value,
                            const std::string& ipv4_only_fix)
{
    throw std::invalid_argument(
        parameter + ": \"" + value + "\" is IPv6, and this transport is IPv4 only; " +
        (ipv4_only_fix.empty() ? std::string("give IPv4 addresses") : ipv4_only_fix));
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


/*! "239.1.2.3:7148", "[ff14::1]:7148" */
std::string text_of(const boost::asio::ip::udp::endpoint& ep)
{
    const std::string address = ep.address().to_string();
    return (ep.address().is_v6() ? "[" + address + "]" : address) + ":" +
           std::to_string(ep.port());
}

/*! Appends \p address and the \p count IPv4 addresses after it. */
void add_v4_range(const std::string& parameter,
                  const std::string& entry,
                  endpoint_use use,
                  ip_family family,
                  const boost::asio::ip::address_v4& address,
                  unsigned long count,
                  unsigned short port,
                  std::vector<boost::asio::ip::udp::endpoint>& out)
{
    using boost::asio::ip::address_v4;
    if (address.is_unspecified()) {
        if (use == endpoint_use::send)
            fail(parameter,
                 entry,
                 "has no destination address (0.0.0.0 only makes sense to receive)",
                 use,
                 family);
        if (count != 0)
            fail(parameter, entry, "gives a range of 0.0.0.0", use, family);
    }
    const std::uint64_t first = address.to_uint();
    if (first + count > 0xffffffffULL)
        fail(parameter, entry, "has a range that runs past 255.255.255.255", use, family);
    const std::string problem =
        address_problem(std::uint32_t(first), std::uint32_t(first + count));
    if (!problem.empty())
        fail(parameter, entry, problem, use, family);
    for (std::uint64_t a = first; a <= first + count; a++)
        out.emplace_back(address_v4(static_cast<address_v4::uint_type>(a)), port);
}

} // namespace

std::string trim(const std::string& s)
{
    const auto begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos)
        return std::string();
    const auto end = s.find_last_not_of(" \t\r\n");
    return s.substr(begin, end - begin + 1);
}

bool resolve_host(const std::string& host,
                  int family,
                  boost::asio::ip::address& out,
                  int& gai_error)
{
    addrinfo hints{};
    hints.ai_family = family;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* found = nullptr;
    gai_error = getaddrinfo(host.c_str(), nullptr, &hints, &found);
    std::unique_ptr<addrinfo, addrinfo_deleter> guard(found);
    if (gai_error != 0 || !found)
        return false;
    if (family == AF_INET) {
        const auto* sin = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
        out = boost::asio::ip::address_v4(ntohl(sin->sin_addr.s_addr));
    } else {
        const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(found->ai_addr);
        boost::asio::ip::address_v6::bytes_type bytes;
        std::memcpy(bytes.data(), &sin6->sin6_addr, bytes.size());
        out = boost::asio::ip::address_v6(bytes, sin6->sin6_scope_id);
    }
    return true;
}

void check_endpoint(const boost::asio::ip::udp::endpoint& ep,
                    const std::string& parameter,
                    endpoint_use use,
                    ip_family family,
                    const std::string& ipv4_only_fix)
{
    const std::string value = text_of(ep);
    if (ep.address().is_v6() && family == ip_family::ipv4)
        fail_ipv6(parameter, value, ipv4_only_fix);
    if (ep.port() == 0)
        fail(parameter, value, "has port 0", use, family);
    if (use == endpoint_use::send && ep.address().is_unspecified())
        fail(parameter,
             value,
             "has no destination address (0.0.0.0 and :: only make sense to receive)",
             use,
             family);
    if (ep.address().is_v6())
        return; // one IPv6 address has no range to check
    const std::uint32_t address = ep.address().to_v4().to_uint();
    const std::string problem = address_problem(address, address);
    if (!problem.empty())
        fail(parameter, value, problem, use, family);
}

namespace {

/*! One entry of a list, split: `HOST[+COUNT]:PORT` or `[HOST][+COUNT]:PORT`. */
struct entry_parts {
    std::string host;
    std::string count_text;
    bool has_count = false;
    std::string port_text;
};

entry_parts split_entry(const std::string& entry,
                        const std::string& parameter,
                        endpoint_use use,
                        ip_family family)
{
    entry_parts out;
    std::string host_and_count;
    if (!entry.empty() && entry.front() == '[') {
        // [IPv6]:PORT, as in URLs: the brackets keep the address's colons apart.
        const std::size_t close = entry.find(']');
        if (close == std::string::npos)
            fail(parameter, entry, "has a '[' without its ']'", use, family);
        out.host = trim(entry.substr(1, close - 1));
        std::string rest = trim(entry.substr(close + 1));
        const std::size_t colon = rest.rfind(':');
        if (colon == std::string::npos)
            fail(parameter, entry, "has no port", use, family);
        out.port_text = trim(rest.substr(colon + 1));
        rest = trim(rest.substr(0, colon));
        if (!rest.empty()) {
            if (rest.front() != '+')
                fail(parameter,
                     entry,
                     "has \"" + rest + "\" between ']' and the port",
                     use,
                     family);
            out.has_count = true;
            out.count_text = trim(rest.substr(1));
        }
        if (out.host.empty())
            fail(parameter, entry, "has nothing between '[' and ']'", use, family);
        return out;
    }
    // The last colon starts the port, so ff14::1:7148 is ff14::1, port 7148 (spead2).
    const std::size_t colon = entry.rfind(':');
    if (colon == std::string::npos)
        fail(parameter, entry, "has no port", use, family);
    out.host = trim(entry.substr(0, colon));
    out.port_text = trim(entry.substr(colon + 1));
    const std::size_t plus = out.host.find('+');
    if (plus != std::string::npos) {
        out.has_count = true;
        out.count_text = trim(out.host.substr(plus + 1));
        out.host = trim(out.host.substr(0, plus));
    }
    return out;
}

/*! \p bytes + \p count; false if that runs past ffff:...:ffff. */
bool advance_v6(boost::asio::ip::address_v6::bytes_type& bytes, std::uint64_t count)
{
    for (int i = 15; i >= 0 && count != 0; i--) {
        const std::uint64_t sum = bytes[i] + (count & 0xff);
        bytes[i] = static_cast<unsigned char>(sum);
        count = (count >> 8) + (sum >> 8);
    }
    return count == 0;
}

/*! Appends \p first and the \p count IPv6 addresses after it. */
void add_v6_range(const std::string& parameter,
                  const std::string& entry,
                  endpoint_use use,
                  const boost::asio::ip::address_v6& first,
                  unsigned long count,
                  unsigned short port,
                  std::vector<boost::asio::ip::udp::endpoint>& out)
{
    const ip_family family = ip_family::ipv4_or_ipv6;
    if (first.is_unspecified() && count != 0)
        fail(parameter, entry, "gives a range of ::", use, family);
    auto last = first.to_bytes();
    if (!advance_v6(last, count))
        fail(parameter,
             entry,
             "has a range that runs past ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
             use,
             family);
    if (first.is_multicast() != boost::asio::ip::address_v6(last).is_multicast())
        fail(parameter,
             entry,
             "is a range that crosses the edge of the multicast range (ff00::/8): give "
             "unicast and multicast addresses as separate entries",
             use,
             family);
    auto bytes = first.to_bytes();
    for (unsigned long i = 0; i <= count; i++) {
        out.emplace_back(boost::asio::ip::address_v6(bytes, first.scope_id()), port);
        advance_v6(bytes, 1);
    }
}

} // namespace

std::vector<boost::asio::ip::udp::endpoint>
parse_endpoints(const std::string& text,
                const std::string& parameter,
                endpoint_use use,
                ip_family family,
                const std::string& ipv4_only_fix)
{
    using boost::asio::ip::address_v4;
    std::vector<boost::asio::ip::udp::endpoint> out;
    if (trim(text).empty())
        fail(parameter, text, "is empty", use, family);

    std::size_t pos = 0;
    for (;;) {
        const std::size_t comma = text.find(',', pos);
        const std::string entry = trim(text.substr(
            pos, comma == std::string::npos ? std::string::npos : comma - pos));
        if (entry.empty())
            fail(parameter,
                 text,
                 "has an empty entry (two commas or a trailing comma)",
                 use,
                 family);

        const entry_parts parts = split_entry(entry, parameter, use, family);
        const std::string& host = parts.host;
        unsigned long port = 0;
        if (!parse_decimal(parts.port_text, 65535, port) || port == 0)
            fail(parameter,
                 entry,
                 "has a bad port \"" + parts.port_text + "\"",
                 use,
                 family);
        unsigned long count = 0;
        if (parts.has_count && !parse_decimal(parts.count_text, max_range_count, count))
            fail(parameter,
                 entry,
                 "has a bad range count \"" + parts.count_text + "\" (0 to " +
                     std::to_string(max_range_count) + ")",
                 use,
                 family);

        boost::asio::ip::address address = address_v4(); // 0.0.0.0: host empty
        if (host.find(':') != std::string::npos) {
            if (family == ip_family::ipv4)
                fail_ipv6(parameter, entry, ipv4_only_fix);
            boost::system::error_code ec;
            const auto v6 = boost::asio::ip::make_address_v6(host, ec);
            if (ec)
                fail(parameter,
                     entry,
                     "has a bad IPv6 address \"" + host +
                         "\" (write IPv6 addresses in brackets: [ff14::1]:7148; a scope "
                         "id follows a %: [fe80::1%eth0]:7148)",
                     use,
                     family);
            if (use == endpoint_use::send && v6.is_unspecified())
                fail(parameter,
                     entry,
                     "has no destination address (:: only makes sense to receive)",
                     use,
                     family);
            add_v6_range(parameter, entry, use, v6, count, std::uint16_t(port), out);
        } else {
            if (!host.empty()) {
                in_addr parsed{};
                int rc = 0;
                if (inet_pton(AF_INET, host.c_str(), &parsed) == 1) {
                    address = address_v4(ntohl(parsed.s_addr));
                } else if (looks_numeric(host) || !valid_hostname(host)) {
                    fail(parameter,
                         entry,
                         "has a bad IPv4 address \"" + host + "\"",
                         use,
                         family);
                } else if (parts.has_count) {
                    fail(parameter,
                         entry,
                         "gives a range on a hostname; ranges need an IP address",
                         use,
                         family);
                } else if (!resolve_host(host, AF_INET, address, rc) &&
                           (family == ip_family::ipv4 ||
                            !resolve_host(host, AF_INET6, address, rc))) {
                    fail(parameter,
                         entry,
                         std::string("names a host that does not resolve to ") +
                             (family == ip_family::ipv4 ? "IPv4" : "IPv4 or IPv6") +
                             " (" + gai_strerror(rc) + ")",
                         use,
                         family);
                }
            }
            if (address.is_v6()) { // a hostname with IPv6 addresses only
                add_v6_range(
                    parameter, entry, use, address.to_v6(), 0, std::uint16_t(port), out);
            } else {
                add_v4_range(parameter,
                             entry,
                             use,
                             family,
                             address.to_v4(),
                             count,
                             std::uint16_t(port),
                             out);
            }
        }

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
        out += text_of(ep);
    }
    return out;
}

std::string
joined_groups_text(const std::vector<boost::asio::ip::udp::endpoint>& endpoints,
                   const std::string& interface)
{
    std::string groups;
    for (const auto& ep : endpoints)
        if (ep.address().is_multicast())
            groups += (groups.empty() ? "" : ", ") + ep.address().to_string();
    if (groups.empty())
        return groups;
    return "joined " + groups + " on " +
           (interface.empty() ? std::string("the interface of the kernel's route")
                              : "interface " + interface);
}

sockaddr_in to_sockaddr(const boost::asio::ip::udp::endpoint& ep)
{
    sockaddr_in out{};
    out.sin_family = AF_INET;
    out.sin_port = htons(ep.port());
    out.sin_addr.s_addr = htonl(ep.address().to_v4().to_uint());
    return out;
}

} // namespace transport
} // namespace spead
} // namespace gr
