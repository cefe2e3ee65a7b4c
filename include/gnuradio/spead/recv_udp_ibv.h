/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_UDP_IBV_H
#define INCLUDED_SPEAD_RECV_UDP_IBV_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_stream.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Settings of an ibverbs raw-packet UDP receiver. Setters validate and throw
 * std::invalid_argument naming the parameter and the fix. Defaults are spead2's, so
 * users can switch between the two.
 */
class SPEAD_API udp_ibv_config
{
public:
    static constexpr std::size_t default_buffer_size = 16 * 1024 * 1024; //!< bytes
    static constexpr std::size_t default_max_size = 9200;                //!< bytes
    static constexpr int default_max_poll = 10;

    udp_ibv_config() = default;

    /*! UDP endpoints to receive: IPv4 multicast groups, unicast addresses of the
     * interface, or 0.0.0.0:PORT (the port on every address). */
    const std::vector<boost::asio::ip::udp::endpoint>& get_endpoints() const
    {
        return d_endpoints;
    }
    udp_ibv_config&
    set_endpoints(const std::vector<boost::asio::ip::udp::endpoint>& endpoints);
    /*! Text form: `239.1.2.3:7148,239.1.2.4:7148`, `239.1.2.3+3:7148`, `0.0.0.0:7148`. */
    udp_ibv_config& set_endpoints(const std::string& endpoints);
    /*! \throws std::invalid_argument for a non-IPv4 address or port 0 */
    udp_ibv_config& add_endpoint(const boost::asio::ip::udp::endpoint& endpoint);

    /*! IPv4 address of the interface whose RDMA device receives. */
    const boost::asio::ip::address& get_interface_address() const
    {
        return d_interface_address;
    }
    /*! \throws std::invalid_argument if not IPv4 */
    udp_ibv_config& set_interface_address(const boost::asio::ip::address& address);
    /*! An IPv4 address or a netdev name (`ens1f0`), resolved to its IPv4 address. */
    udp_ibv_config& set_interface(const std::string& address_or_name);

    /*! Receive ring size in bytes; 0 = default (16 MiB). The ring is cut into slots of
     * max_size + 42 bytes (Ethernet, IPv4, UDP headers), so the size used is rounded
     * down to whole slots, and clamped to the device's limits with a warning. */
    std::size_t get_buffer_size() const { return d_buffer_size; }
    udp_ibv_config& set_buffer_size(std::size_t bytes);

    /*! Largest UDP payload accepted, bytes (default 9200). */
    std::size_t get_max_size() const { return d_max_size; }
    udp_ibv_config& set_max_size(std::size_t bytes);

    /*! Completion vector for interrupts; negative = busy polling (no interrupts, one
     * core spins). Non-negative values are taken modulo the device's number of
     * completion vectors, so readers numbered 0, 1, 2... spread across them. */
    int get_comp_vector() const { return d_comp_vector; }
    udp_ibv_config& set_comp_vector(int comp_vector);

    /*! Completion-queue polls per wake-up (interrupt mode) or before yielding (busy
     * polling). \throws std::invalid_argument for 0 or less */
    int get_max_poll() const { return d_max_poll; }
    udp_ibv_config& set_max_poll(int max_poll);

private:
    std::vector<boost::asio::ip::udp::endpoint> d_endpoints;
    boost::asio::ip::address d_interface_address;
    std::size_t d_buffer_size = default_buffer_size;
    std::size_t d_max_size = default_max_size;
    int d_comp_vector = 0;
    int d_max_poll = default_max_poll;
};

/*!
 * \brief Receives UDP over an Infiniband-verbs raw-packet QP (Mellanox/NVIDIA
 * ConnectX), bypassing the kernel: one flow per endpoint steers matching frames into
 * a registered ring; multicast groups are also joined through an ordinary socket so
 * IGMP reaches the switch. IPv4 only: VLAN-tagged frames, IP options and fragments
 * are rejected and counted.
 *
 * Needs CAP_NET_RAW (see docs/ibverbs.md); errors name the cause and the fix.
 */
class SPEAD_API udp_ibv_reader : public reader
{
public:
    /*! \throws std::invalid_argument without endpoints or interface address
     *  \throws std::system_error (with the cause and fix) when the device cannot be set
     * up */
    udp_ibv_reader(stream& owner, const udp_ibv_config& config);
    ~udp_ibv_reader() override;

    recv_stats transport_stats() const override;

    /*! Receive ring actually used, bytes (whole slots, or whole WQEs of a multi-packet
     * receive queue, within device limits). */
    std::size_t get_buffer_size() const;
    /*! Completion vector actually used (after the modulo), or -1 when busy polling. */
    int get_comp_vector() const;
    /*! True when the ring is a multi-packet receive queue (mlx5 striding RQ: each
     * packet takes only the 64-byte strides it needs), false for fixed slots of
     * max_size + 42 bytes. Chosen automatically (the log says why);
     * GR_SPEAD_IBV_MPRQ=0 in the environment forces slots. */
    bool uses_multi_packet_receive_queue() const;

protected:
    void run() override;
    void wake() override;

private:
    struct impl;
    std::unique_ptr<impl> d_impl;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_UDP_IBV_H */
