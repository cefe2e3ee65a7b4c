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
#include <gnuradio/spead/udp_ibv_config_base.h>
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
 * \brief Settings of an ibverbs raw-packet UDP receiver: those it shares with the
 * sender (udp_ibv_config_base: endpoints, interface, buffer_size, comp_vector,
 * max_poll) and max_size. Setters validate and throw std::invalid_argument naming the
 * parameter and the fix. Defaults are spead2's, so users can switch between the two.
 */
class SPEAD_API udp_ibv_config : public udp_ibv_config_base<udp_ibv_config>
{
public:
    /*! Receive ring, bytes. The ring is cut into slots of max_size + 42 bytes
     * (Ethernet, IPv4, UDP headers), or into WQEs of a multi-packet receive queue. */
    static constexpr std::size_t default_buffer_size = 16 * 1024 * 1024;
    static constexpr std::size_t default_max_size = 9200; //!< bytes
    static constexpr int default_max_poll = 10;

    udp_ibv_config() = default;

    /*! Largest UDP payload accepted, bytes (default 9200).
     * \throws std::invalid_argument outside 64 to 65507 */
    std::size_t get_max_size() const { return d_max_size; }
    udp_ibv_config& set_max_size(std::size_t bytes);

private:
    std::size_t d_max_size = default_max_size;
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
class SPEAD_API udp_ibv_reader : public transport_reader
{
public:
    /*! \throws std::invalid_argument without endpoints or interface address
     *  \throws std::system_error (with the cause and fix) when the device cannot be set
     * up */
    udp_ibv_reader(stream& owner, const udp_ibv_config& config);

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

private:
    struct impl; //!< the verbs objects and the receive loop (udp_ibv_reader.cc)
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_UDP_IBV_H */
