/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// transport::interface_index(): an interface named as IPv6 multicast names it (by
// index), found from its name, its index or one of its addresses.

#include "endpoint.h"
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <system_error>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace gr {
namespace spead {
namespace transport {

namespace {

/*! \p address is one of \p ifa's (IPv4 or IPv6). */
bool has_address(const ifaddrs& ifa, const boost::asio::ip::address& address)
{
    if (ifa.ifa_addr == nullptr)
        return false;
    if (address.is_v4() && ifa.ifa_addr->sa_family == AF_INET) {
        const auto* sin = reinterpret_cast<const sockaddr_in*>(ifa.ifa_addr);
        return ntohl(sin->sin_addr.s_addr) == address.to_v4().to_uint();
    }
    if (address.is_v6() && ifa.ifa_addr->sa_family == AF_INET6) {
        const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(ifa.ifa_addr);
        return std::memcmp(&sin6->sin6_addr,
                           address.to_v6().to_bytes().data(),
                           sizeof(sin6->sin6_addr)) == 0;
    }
    return false;
}

} // namespace

unsigned int interface_index(const std::string& text, const std::string& parameter)
{
    const auto begin = text.find_first_not_of(" \t");
    const std::string wanted =
        begin == std::string::npos
            ? ""
            : text.substr(begin, text.find_last_not_of(" \t") + 1 - begin);
    const char* expected = "give a local interface's netdev name (e.g. eth0), its index "
                           "(e.g. 2) or one of its addresses (IPv4 or IPv6)";
    if (wanted.empty())
        throw std::invalid_argument(parameter + ": empty; " + expected);
    char name[IF_NAMESIZE] = {};
    if (wanted.size() <= 10 &&
        wanted.find_first_not_of("0123456789") == std::string::npos) {
        const unsigned long number = std::stoul(wanted);
        if (number <= 0xffffffffUL &&
            if_indextoname(static_cast<unsigned int>(number), name) != nullptr)
            return static_cast<unsigned int>(number);
    }
    if (const unsigned int index = if_nametoindex(wanted.c_str()); index != 0)
        return index;

    ifaddrs* raw = nullptr;
    if (getifaddrs(&raw) != 0)
        throw std::system_error(errno, std::generic_category(), "getifaddrs");
    const std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> list(raw, freeifaddrs);
    boost::system::error_code ec;
    const boost::asio::ip::address address = boost::asio::ip::make_address(wanted, ec);
    std::string names; // "lo (1), eth0 (2)": what the user could have meant
    for (const ifaddrs* p = list.get(); p; p = p->ifa_next) {
        const std::string entry = std::string(p->ifa_name) + " (" +
                                  std::to_string(if_nametoindex(p->ifa_name)) + ")";
        if (names.find(entry) == std::string::npos)
            names += (names.empty() ? "" : ", ") + entry;
        if (!ec && has_address(*p, address))
            return if_nametoindex(p->ifa_name);
    }
    throw std::invalid_argument(parameter + ": \"" + wanted +
                                "\" is not a local interface; " + expected +
                                ". Interfaces here (index): " + names);
}

} // namespace transport
} // namespace spead
} // namespace gr
