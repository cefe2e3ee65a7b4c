/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_UDP_IBV_H
#define INCLUDED_SPEAD_SEND_UDP_IBV_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_stream.h>
#include <gnuradio/spead/udp_ibv_config_base.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Settings of an ibverbs raw-packet UDP sender: those it shares with the
 * receiver (udp_ibv_config_base: endpoints, interface, buffer_size, comp_vector,
 * max_poll), ttl and memory regions. Setters validate and throw std::invalid_argument
 * naming the parameter and the fix. Defaults are spead2's.
 */
class SPEAD_API udp_ibv_config : public udp_ibv_config_base<udp_ibv_config>
{
public:
    using memory_region = std::pair<const void*, std::size_t>;

    /*! Transmit ring, bytes, cut into packet slots. */
    static constexpr std::size_t default_buffer_size = 512 * 1024;
    static constexpr int default_max_poll = 10;

    udp_ibv_config() = default;

    /*! IPv4 time to live (default 1: the local network only).
     * \throws std::invalid_argument outside 0 to 255 */
    int get_ttl() const { return d_ttl; }
    udp_ibv_config& set_ttl(int ttl);

    /*! Memory that items may live in. Items lying wholly inside a region are sent
     * zero-copy: the region is registered with the NIC (a GPU pointer works where the
     * driver supports PeerDirect). Overlapping regions are rejected when the stream is
     * built. */
    const std::vector<memory_region>& get_memory_regions() const
    {
        return d_memory_regions;
    }
    udp_ibv_config& set_memory_regions(const std::vector<memory_region>& regions);
    /*! \throws std::invalid_argument for a null pointer or size 0 */
    udp_ibv_config& add_memory_region(const void* ptr, std::size_t size);

private:
    int d_ttl = 1;
    std::vector<memory_region> d_memory_regions;
};

/*!
 * \brief Sends UDP over an Infiniband-verbs raw-packet QP: frames are built in
 * registered transmit slots (Ethernet, IPv4 with DF and TTL, UDP), payload pieces in a
 * registered memory region go out zero-copy, and only the last work request of each
 * batch is signalled.
 */
class SPEAD_API udp_ibv_stream : public stream
{
public:
    /*! \throws std::invalid_argument without interface or endpoints, with overlapping
     * memory regions, or with a max_packet_size above the interface MTU
     *  \throws std::system_error (with cause and fix) when the device cannot be set up
     *  or a unicast destination's MAC address is unknown */
    udp_ibv_stream(boost::asio::io_context& io,
                   const stream_config& config,
                   const udp_ibv_config& ibv_config);

private:
    struct impl; //!< the writer, owned by the stream
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_UDP_IBV_H */
