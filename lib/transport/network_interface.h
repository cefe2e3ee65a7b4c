/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_NETWORK_INTERFACE_H
#define INCLUDED_SPEAD_TRANSPORT_NETWORK_INTERFACE_H

#include <gnuradio/spead/api.h>
#include <boost/asio/ip/address_v4.hpp>
#include <string>

namespace gr {
namespace spead {
namespace transport {

/*!
 * Local network interfaces as users name them (`interface` of every transport), found
 * with getifaddrs. Errors are std::invalid_argument naming the parameter and listing
 * the interfaces there are.
 */

/*! A network interface: its IPv4 address, netdev name and index. */
struct SPEAD_API network_interface {
    boost::asio::ip::address_v4 address;
    std::string name;
    unsigned int index = 0;
};

/*!
 * Finds a local interface given as an IPv4 address (`192.168.1.10`) or a netdev name
 * (`eth0`), using getifaddrs. An interface with several IPv4 addresses given by name
 * yields its first one.
 * \throws std::invalid_argument naming \p parameter and listing the interfaces there are
 */
SPEAD_API network_interface resolve_interface(const std::string& text,
                                              const std::string& parameter);

/*!
 * Index of a local interface given as its netdev name (`eth0`), its index (`2`) or
 * one of its addresses, IPv4 or IPv6: what IPv6 multicast (IPV6_JOIN_GROUP,
 * IPV6_MULTICAST_IF) names an interface by.
 * \throws std::invalid_argument naming \p parameter and listing the interfaces there are
 */
SPEAD_API unsigned int interface_index(const std::string& text,
                                       const std::string& parameter);

/*! MTU of a netdev in bytes. \throws std::system_error */
SPEAD_API int interface_mtu(const std::string& name);

} // namespace transport
} // namespace spead
} // namespace gr

#endif
