/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The checks that the transports' config setters share (kernel UDP and ibverbs, tcp
// and rdma, receive and send), written once so that a parameter is refused in the same
// words whichever transport it is given to. Each throws std::invalid_argument naming the
// parameter, the value and the fix.

#ifndef INCLUDED_SPEAD_TRANSPORT_CONFIG_CHECKS_H
#define INCLUDED_SPEAD_TRANSPORT_CONFIG_CHECKS_H

#include "transport/endpoint.h"
#include <gnuradio/spead/api.h>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace transport {

/*! Endpoints given as objects, each checked as parse_endpoints checks text. */
SPEAD_API std::vector<boost::asio::ip::udp::endpoint>
checked_endpoints(const std::vector<boost::asio::ip::udp::endpoint>& endpoints,
                  endpoint_use use,
                  ip_family family = ip_family::ipv4,
                  const std::string& ipv4_only_fix = std::string());

/*! A receiver's largest datagram (max_size): 64 to 65507 bytes. */
SPEAD_API std::size_t checked_max_size(std::size_t bytes);

/*! IP time-to-live (ttl): 0 to 255. */
SPEAD_API int checked_ttl(int ttl);

/*! Completion-queue polls per wake-up or before waiting (max_poll): at least 1. */
SPEAD_API int checked_max_poll(int max_poll, int default_max_poll);

/*! A time limit of a connected link (connect_timeout, idle_timeout, the reconnect
 * back-off): 1 ms (0 when \p zero_ok: off) to 10 min. */
SPEAD_API std::chrono::milliseconds
checked_duration(const char* parameter, std::chrono::milliseconds t, bool zero_ok);

/*! A local interface (interface): empty, or an IP address or netdev name this host
 * has. */
SPEAD_API std::string checked_interface(const std::string& address_or_name);

} // namespace transport
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_TRANSPORT_CONFIG_CHECKS_H */
