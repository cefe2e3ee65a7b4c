/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The Ethernet address a raw UDP frame to a destination needs: the multicast MAC of a
// group, or the next hop's MAC from the kernel's neighbour table (asking the kernel to
// resolve it when it is not there yet).

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_DESTINATION_MAC_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_DESTINATION_MAC_H

#include "transport/network_interface.h"
#include "transport/raw_packet.h"
#include <gnuradio/spead/api.h>
#include <boost/asio/ip/udp.hpp>

namespace gr {
namespace spead {
namespace ibv {

/*!
 * The MAC for frames to \p ep sent on \p iface: 01:00:5e + the low 23 bits for a
 * multicast group; for a unicast host, that of the next hop (the route's gateway, or
 * the host when it is on-link) from the neighbour table. An unknown neighbour is
 * resolved by sending empty datagrams to its discard port through \p socket (a UDP
 * socket bound to the interface) for up to a second.
 * \throws std::system_error (EHOSTUNREACH) naming `endpoints` and the fixes
 */
SPEAD_API mac_address destination_mac(const boost::asio::ip::udp::endpoint& ep,
                                      const transport::network_interface& iface,
                                      int socket);

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
