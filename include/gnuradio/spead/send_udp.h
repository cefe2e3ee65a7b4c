/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_UDP_H
#define INCLUDED_SPEAD_SEND_UDP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_stream.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Settings of a kernel-socket UDP sender (the twin of udp_ibv_config).
 * Setters validate and throw std::invalid_argument naming the parameter and the fix.
 */
class SPEAD_API udp_config
{
public:
    /*! Socket send buffer, bytes (512 KiB, as spead2). */
    static constexpr std::size_t default_buffer_size = 512 * 1024;
    /*! Largest buffer_size accepted, bytes. */
    static constexpr std::size_t max_buffer_size = std::size_t(1) << 30;

    udp_config() = default;

    /*!
     * Destinations, one substream each, in order: `239.1.2.3:7148,10.0.0.2:7148`, a
     * range `239.1.2.3+3:7148` (four substreams) or `hostname:7148`; IPv6 as spead2
     * writes it, `[::1]:7148`, `ff14::1:7148`, all of one IP version (one socket).
     */
    udp_config& set_endpoints(const std::string& endpoints);
    udp_config&
    set_endpoints(const std::vector<boost::asio::ip::udp::endpoint>& endpoints);
    udp_config& add_endpoint(const boost::asio::ip::udp::endpoint& endpoint);
    const std::vector<boost::asio::ip::udp::endpoint>& get_endpoints() const
    {
        return d_endpoints;
    }

    /*! IP time-to-live of multicast and unicast packets, 0 to 255 (default 1: the
     * local network only, as spead2). */
    udp_config& set_ttl(int ttl);
    int get_ttl() const { return d_ttl; }

    /*! Interface multicast leaves from (IP_MULTICAST_IF), also the source address of
     * unicast: its IPv4 address or netdev name. IPv6 (IPV6_MULTICAST_IF): its netdev
     * name, index or an address. Empty (default): the kernel's route. */
    udp_config& set_interface(const std::string& address_or_name);
    const std::string& get_interface() const { return d_interface; }

    /*! Send buffer, bytes (SO_SNDBUF); 0 = default_buffer_size. */
    udp_config& set_buffer_size(std::size_t bytes);
    std::size_t get_buffer_size() const { return d_buffer_size; }

private:
    std::vector<boost::asio::ip::udp::endpoint> d_endpoints;
    int d_ttl = 1;
    std::string d_interface;
    std::size_t d_buffer_size = default_buffer_size;
};

/*!
 * \brief Sends heaps over a kernel UDP socket: substream i goes to endpoint i.
 *
 * Packets go out in sendmmsg() batches, gathered straight from item memory. Don't
 * Fragment is set (IP_MTU_DISCOVER = IP_PMTUDISC_DO): a packet that does not fit the
 * path MTU fails (counted in packets_failed) rather than fragmenting, and construction
 * already refuses a max_packet_size above the MTU towards any destination. A full
 * socket buffer (EAGAIN) or device queue (ENOBUFS) makes the writer wait, not fail.
 */
class SPEAD_API udp_stream : public stream
{
public:
    /*! \throws std::invalid_argument for no endpoints, or a max_packet_size the path
     * MTU cannot carry \throws std::system_error when a socket call fails */
    udp_stream(boost::asio::io_context& io,
               const stream_config& config,
               const udp_config& udp_config);
    ~udp_stream() override;

    /*! Send buffer the kernel granted, bytes. */
    std::size_t get_granted_buffer_size() const;

private:
    struct impl; //!< the writer, owned by the stream
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_UDP_H */
