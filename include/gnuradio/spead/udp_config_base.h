/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_UDP_CONFIG_BASE_H
#define INCLUDED_SPEAD_UDP_CONFIG_BASE_H

#include <gnuradio/spead/api.h>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief The settings that kernel-socket UDP receive and send share: endpoints,
 * interface and socket buffer size, validated in the same words for both (the twin of
 * udp_ibv_config_base). \p Derived (recv::udp_config, send::udp_config) adds its own
 * settings and gives `default_buffer_size` and `receives` (whether its endpoints are
 * places to listen on or destinations); the setters return it, so calls chain.
 * Setters throw std::invalid_argument naming the parameter, the value and the fix.
 */
template <typename Derived>
class SPEAD_API udp_config_base
{
public:
    /*! Largest buffer_size accepted, bytes (the kernel takes an int and doubles it). */
    static constexpr std::size_t max_buffer_size = std::size_t(1) << 30;

    /*!
     * Endpoints as text. To listen on: `239.1.2.3:7148,239.1.2.4:7148`, a range
     * `239.1.2.3+3:7148` (that address and the next three), `0.0.0.0:7148` or `:7148`
     * (every local address), or `hostname:7148`; multicast groups are joined. To send
     * to, one substream each, in order: `239.1.2.3:7148,10.0.0.2:7148`, a range (four
     * substreams) or `hostname:7148`, all of one IP version (one socket). IPv6 as
     * spead2 writes it: `[::1]:7148`, `ff14::1:7148`, `[::]:7148`.
     */
    Derived& set_endpoints(const std::string& endpoints);
    Derived& set_endpoints(const std::vector<boost::asio::ip::udp::endpoint>& endpoints);
    Derived& add_endpoint(const boost::asio::ip::udp::endpoint& endpoint);
    const std::vector<boost::asio::ip::udp::endpoint>& get_endpoints() const
    {
        return d_endpoints;
    }

    /*! Interface that joins the multicast groups (receive) or that multicast leaves
     * from, also the source address of unicast (send: IP_MULTICAST_IF): its IPv4
     * address (`192.168.1.10`) or its netdev name (`eth0`); IPv6 takes its name, index
     * or an address. Empty (default): the kernel's choice by route. */
    Derived& set_interface(const std::string& address_or_name);
    const std::string& get_interface() const { return d_interface; }

    /*! Socket buffer, bytes (SO_RCVBUF or SO_SNDBUF); 0 = Derived::default_buffer_size.
     * The kernel caps it (net.core.rmem_max, wmem_max): the transport reads it back. */
    Derived& set_buffer_size(std::size_t bytes);
    std::size_t get_buffer_size() const { return d_buffer_size; }

protected:
    udp_config_base() = default;

private:
    Derived& self() { return static_cast<Derived&>(*this); }

    std::vector<boost::asio::ip::udp::endpoint> d_endpoints;
    std::string d_interface;
    std::size_t d_buffer_size = Derived::default_buffer_size;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_UDP_CONFIG_BASE_H */
