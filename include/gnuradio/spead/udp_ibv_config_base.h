/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_UDP_IBV_CONFIG_BASE_H
#define INCLUDED_SPEAD_UDP_IBV_CONFIG_BASE_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/config_setter.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief The settings that ibverbs receive and send share (as spead2's
 * udp_ibv_config_base): endpoints, interface, buffer size, completion vector and
 * max_poll, validated in the same words for both. \p Derived
 * (recv::udp_ibv_config, send::udp_ibv_config) adds its own settings and gives
 * `default_buffer_size` and `default_max_poll`; the setters return it, so calls chain.
 * Setters throw std::invalid_argument naming the parameter, the value and the fix.
 */
template <typename Derived>
class SPEAD_API udp_ibv_config_base
{
public:
    /*! UDP endpoints: for a receiver, IPv4 multicast groups, unicast addresses of the
     * interface, or 0.0.0.0:PORT (the port on every address); for a sender, the
     * destinations, one substream each (multicast groups, or unicast hosts whose MAC
     * is in the kernel's neighbour table). */
    const std::vector<boost::asio::ip::udp::endpoint>& get_endpoints() const
    {
        return d_endpoints;
    }
    /*! \throws std::invalid_argument for a non-IPv4 address or port 0; a rejected
     * list leaves the old one */
    Derived& set_endpoints(const std::vector<boost::asio::ip::udp::endpoint>& endpoints);
    /*! Text form: `239.1.2.3:7148,239.1.2.4:7148`, `239.1.2.3+3:7148`, `0.0.0.0:7148`
     * (receive only). */
    Derived& set_endpoints(const std::string& endpoints);
    /*! \throws std::invalid_argument for a non-IPv4 address or port 0 */
    Derived& add_endpoint(const boost::asio::ip::udp::endpoint& endpoint);

    /*! IPv4 address of the interface whose RDMA device receives or sends. */
    const boost::asio::ip::address& get_interface_address() const
    {
        return d_interface_address;
    }
    /*! \throws std::invalid_argument if not IPv4, unspecified or multicast */
    Derived& set_interface_address(const boost::asio::ip::address& address);
    /*! A local interface: its IPv4 address or netdev name (`ens1f0`), resolved to its
     * IPv4 address. \throws std::invalid_argument listing the interfaces there are */
    Derived& set_interface(const std::string& address_or_name);

    /*! Registered ring in bytes; 0 = Derived::default_buffer_size. Rounded to whole
     * packet slots (or WQEs) and clamped to the device's limits with a warning. */
    std::size_t get_buffer_size() const { return d_buffer_size; }
    Derived& set_buffer_size(std::size_t bytes);

    /*! Completion vector for interrupts; negative = busy polling (no interrupts, one
     * core spins). Non-negative values are taken modulo the device's number of
     * completion vectors, so readers or streams numbered 0, 1, 2... spread across
     * them. Default 0. */
    int get_comp_vector() const { return d_comp_vector; }
    Derived& set_comp_vector(int comp_vector)
    {
        return detail::assign(self(), d_comp_vector, comp_vector);
    }

    /*! Completion-queue polls per wake-up (interrupt mode) or before yielding or
     * waiting (busy polling); default Derived::default_max_poll.
     * \throws std::invalid_argument for 0 or less */
    int get_max_poll() const { return d_max_poll; }
    Derived& set_max_poll(int max_poll);

    /*! What a reader or stream checks before it touches the device.
     * \throws std::invalid_argument naming `endpoints` or `interface_address` when
     * either was not given */
    void check_complete() const;

protected:
    udp_ibv_config_base() = default;

private:
    Derived& self() { return static_cast<Derived&>(*this); }

    std::vector<boost::asio::ip::udp::endpoint> d_endpoints;
    boost::asio::ip::address d_interface_address;
    std::size_t d_buffer_size = Derived::default_buffer_size;
    int d_comp_vector = 0;
    int d_max_poll = Derived::default_max_poll;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_UDP_IBV_CONFIG_BASE_H */
