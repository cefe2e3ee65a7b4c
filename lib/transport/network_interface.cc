/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "common/file_descriptor.h"
#include "endpoint.h"
#include "network_interface.h"
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <system_error>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace gr {
namespace spead {
namespace transport {

namespace {

struct ifaddrs_deleter {
    void operator()(ifaddrs* p) const { freeifaddrs(p); }
};

using ifaddrs_ptr = std::unique_ptr<ifaddrs, ifaddrs_deleter>;

/*! Every address of every local interface, as getifaddrs lists them. */
ifaddrs_ptr local_addresses()
{
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0)
        throw std::system_error(errno, std::generic_category(), "getifaddrs");
    return ifaddrs_ptr(list);
}

bool is_ipv4(const ifaddrs& ifa)
{
    return ifa.ifa_addr != nullptr && ifa.ifa_addr->sa_family == AF_INET;
}

boost::asio::ip::address_v4 address_of(const ifaddrs& ifa)
{
    const auto* sin = reinterpret_cast<const sockaddr_in*>(ifa.ifa_addr);
    return boost::asio::ip::address_v4(ntohl(sin->sin_addr.s_addr));
}

/*! \p address is one of \p ifa's (IPv4 or IPv6). */
bool has_address(const ifaddrs& ifa, const boost::asio::ip::address& address)
{
    if (address.is_v4() && is_ipv4(ifa))
        return address_of(ifa) == address.to_v4();
    if (address.is_v6() && ifa.ifa_addr != nullptr &&
        ifa.ifa_addr->sa_family == AF_INET6) {
        const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(ifa.ifa_addr);
        return std::memcmp(&sin6->sin6_addr,
                           address.to_v6().to_bytes().data(),
                           sizeof(sin6->sin6_addr)) == 0;
    }
    return false;
}

/*! "lo (127.0.0.1), eth0 (192.0.2.2)": what the user could have meant. */
std::string list_ipv4_interfaces(const ifaddrs* list)
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

/*! "lo (1), eth0 (2)": interfaces by index, each once. */
std::string list_indexes(const ifaddrs* list)
{
    std::string out;
    for (const ifaddrs* p = list; p; p = p->ifa_next) {
        const std::string entry = std::string(p->ifa_name) + " (" +
                                  std::to_string(if_nametoindex(p->ifa_name)) + ")";
        if (out.find(entry) == std::string::npos)
            out += (out.empty() ? "" : ", ") + entry;
    }
    return out;
}

} // namespace

network_interface resolve_interface(const std::string& text, const std::string& parameter)
{
    const std::string wanted = trim(text);
    const char* expected =
        "give the IPv4 address of a local interface (e.g. 192.168.1.10) "
        "or its netdev name (e.g. eth0)";
    if (wanted.empty())
        throw std::invalid_argument(parameter + ": empty; " + expected);
    const ifaddrs_ptr list = local_addresses();

    boost::system::error_code not_an_address;
    const boost::asio::ip::address_v4 address =
        boost::asio::ip::make_address_v4(wanted, not_an_address);
    const bool by_address = !not_an_address;
    bool name_exists = false;
    for (const ifaddrs* p = list.get(); p; p = p->ifa_next) {
        if (!by_address && wanted == p->ifa_name)
            name_exists = true;
        if (!is_ipv4(*p))
            continue;
        const bool match = by_address ? address_of(*p) == address : wanted == p->ifa_name;
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
    else if (wanted.find_first_not_of("0123456789.") == std::string::npos)
        problem = "is not an IPv4 address";
    else
        problem = "is not a local interface";
    throw std::invalid_argument(parameter + ": \"" + wanted + "\" " + problem + "; " +
                                expected +
                                ". Interfaces here: " + list_ipv4_interfaces(list.get()));
}

unsigned int interface_index(const std::string& text, const std::string& parameter)
{
    const std::string wanted = trim(text);
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

    const ifaddrs_ptr list = local_addresses();
    boost::system::error_code ec;
    const boost::asio::ip::address address = boost::asio::ip::make_address(wanted, ec);
    for (const ifaddrs* p = list.get(); p && !ec; p = p->ifa_next)
        if (has_address(*p, address))
            return if_nametoindex(p->ifa_name);
    throw std::invalid_argument(parameter + ": \"" + wanted +
                                "\" is not a local interface; " + expected +
                                ". Interfaces here (index): " + list_indexes(list.get()));
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
