/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_LINK_PEER_FILTER_H
#define INCLUDED_SPEAD_TRANSPORT_LINK_PEER_FILTER_H

#include <gnuradio/spead/api.h>
#include <boost/asio/ip/address.hpp>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief A connected link's allowed_peers: the addresses and networks a listening
 * receiver lets in (`10.0.0.0/8,192.168.1.5,::1`).
 *
 * An empty list allows everyone. IPv4-mapped IPv6 peers (::ffff:a.b.c.d, how an IPv6
 * socket sees IPv4 peers) match the IPv4 entries.
 */
class SPEAD_API peer_filter
{
public:
    peer_filter() = default;
    /*! \throws std::invalid_argument naming allowed_peers, the bad entry and the syntax
     */
    explicit peer_filter(const std::string& text);

    /*! One entry: an address and how many of its leading bits must match. */
    struct network {
        std::array<std::uint8_t, 16> bytes; //!< IPv6 form (IPv4 mapped)
        unsigned prefix_bits;               //!< of the 128
    };

    /*! The peer may connect. */
    bool allows(const boost::asio::ip::address& peer) const;
    /*! Entries were given (otherwise everyone is allowed). */
    bool restricts() const { return !d_networks.empty(); }
    /*! The entries, in the order given (for a kernel filter made from them). */
    const std::vector<network>& networks() const { return d_networks; }

private:
    std::vector<network> d_networks;
};

} // namespace spead
} // namespace gr

#endif
