/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_ENDPOINT_H
#define INCLUDED_SPEAD_TRANSPORT_ENDPOINT_H

#include <gnuradio/spead/api.h>
#include <netinet/in.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/udp.hpp>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace transport {

/*!
 * Endpoints as users write them, shared by the kernel UDP and the ibverbs transports
 * (interfaces: network_interface.h). Every error is a std::invalid_argument that names
 * the parameter, quotes the bad value and shows the expected syntax.
 */

/*! What the endpoints are for: receivers may listen on 0.0.0.0 (every local address),
 * senders need a destination. */
enum class endpoint_use { receive, send };

/*! The IP versions a transport takes: kernel UDP sockets take IPv4 and IPv6, as
 * spead2's; ibverbs and capture frames are IPv4 only (spead2's ibverbs too). */
enum class ip_family { ipv4, ipv4_or_ipv6 };

/*! Largest COUNT in ADDRESS+COUNT: a range stays a list a person would type. */
constexpr unsigned int max_range_count = 1023;

/*!
 * Parses a comma-separated list of endpoints:
 * - `239.1.2.3:7148,239.1.2.4:7148` — addresses with ports;
 * - `239.1.2.3+3:7148` — a range: 239.1.2.3 and the 3 addresses after it (four);
 * - `0.0.0.0:7148` or `:7148` — every local address (receive only);
 * - `host.example:7148` — a hostname, resolved to its first IPv4 address (or, where
 *   IPv6 is taken and it has no IPv4 address, its first IPv6 one);
 * - with ip_family::ipv4_or_ipv6, IPv6 as spead2 writes it: `[::1]:7148`,
 *   `ff14::1:7148` (the last colon starts the port), `[ff14::1]+3:7148`,
 *   `[fe80::1%eth0]:7148` (a scope id), `[::]:7148` (every local IPv6 address).
 * Whitespace around entries is ignored. Ports are 1 to 65535.
 *
 * \param text the list
 * \param parameter the parameter name that error messages start with (e.g. "endpoints")
 * \param use receive allows 0.0.0.0 and ::; send does not
 * \param family whether IPv6 is taken
 * \param ipv4_only_fix with ip_family::ipv4, what the error for an IPv6 entry tells the
 *        user to do instead (default: give IPv4 addresses)
 * \throws std::invalid_argument for an empty list or any malformed entry
 */
SPEAD_API std::vector<boost::asio::ip::udp::endpoint>
parse_endpoints(const std::string& text,
                const std::string& parameter,
                endpoint_use use,
                ip_family family = ip_family::ipv4,
                const std::string& ipv4_only_fix = std::string());

/*! Checks endpoints given as objects the way parse_endpoints checks text (the family,
 * port 1..65535, 0.0.0.0 and :: only to receive). \throws std::invalid_argument */
SPEAD_API void check_endpoint(const boost::asio::ip::udp::endpoint& ep,
                              const std::string& parameter,
                              endpoint_use use,
                              ip_family family = ip_family::ipv4,
                              const std::string& ipv4_only_fix = std::string());

/*! \p s without the blanks (spaces, tabs, line ends) around it. */
SPEAD_API std::string trim(const std::string& s);

/*!
 * The first address getaddrinfo gives for \p host in \p family (AF_INET or AF_INET6).
 * \return false when it gives none; \p gai_error then holds getaddrinfo's code (for
 *         gai_strerror), 0 if it succeeded with an empty list
 */
SPEAD_API bool resolve_host(const std::string& host,
                            int family,
                            boost::asio::ip::address& out,
                            int& gai_error);

/*! "239.1.2.3:7148,[ff14::1]:7148" */
SPEAD_API std::string
to_string(const std::vector<boost::asio::ip::udp::endpoint>& endpoints);

/*!
 * What a receiver's log says of the multicast groups among \p endpoints: "joined
 * 239.1.2.3, 239.1.2.4 on interface eth0" (\p interface as given; empty: "on the
 * interface of the kernel's route"). Empty when no endpoint is multicast.
 */
SPEAD_API std::string
joined_groups_text(const std::vector<boost::asio::ip::udp::endpoint>& endpoints,
                   const std::string& interface);

/*! The endpoint as a sockaddr_in for the socket calls. */
SPEAD_API sockaddr_in to_sockaddr(const boost::asio::ip::udp::endpoint& ep);

} // namespace transport
} // namespace spead
} // namespace gr

#endif
