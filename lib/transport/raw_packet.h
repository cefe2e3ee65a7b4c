/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_RAW_PACKET_H
#define INCLUDED_SPEAD_TRANSPORT_RAW_PACKET_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/stats.h>
#include <array>
#include <cstddef>
#include <cstdint>

namespace gr {
namespace spead {

/*
 * Ethernet / IPv4 / UDP frames as raw bytes: parsed by the capture reader and the
 * ibverbs receiver, built by the capture writer and the ibverbs sender. No I/O, no
 * allocation: both directions run once per packet.
 *
 * IPv4 addresses and ports are in host byte order throughout (192.168.0.1 is
 * 0xc0a80001), as boost::asio::ip::address_v4::to_uint() gives them.
 */

using mac_address = std::array<std::uint8_t, 6>;

constexpr std::size_t ethernet_header_size = 14;
constexpr std::size_t linux_sll_header_size = 16;
constexpr std::size_t ipv4_header_size = 20; //!< without options
constexpr std::size_t udp_header_size = 8;
/*! Bytes in front of the UDP payload in an Ethernet frame built here (42). */
constexpr std::size_t udp_frame_overhead =
    ethernet_header_size + ipv4_header_size + udp_header_size;
/*! Largest UDP payload an IPv4 datagram can carry (65507). */
constexpr std::size_t max_udp_payload = 65535 - ipv4_header_size - udp_header_size;

constexpr std::uint16_t ethertype_ipv4 = 0x0800;
constexpr std::uint8_t ip_protocol_udp = 17;

/*! Link-layer framing of a captured frame (pcap's link types). */
enum class link_type {
    ethernet,  //!< DLT_EN10MB: 14-byte Ethernet II header
    linux_sll, //!< DLT_LINUX_SLL: 16-byte Linux "cooked" header (captures on "any")
};

/*! Why a frame was not taken as a UDP datagram; each maps onto a recv_stat. */
enum class frame_result : std::uint8_t {
    ok,
    not_ipv4_udp, //!< another ethertype or IP protocol, or not a valid IPv4 header
    vlan,         //!< 802.1Q / 802.1ad tagged
    ip_options,   //!< IPv4 header longer than 20 bytes
    fragmented,   //!< IPv4 fragment (more-fragments flag or a fragment offset)
    truncated,    //!< shorter than its headers, IPv4 total length or UDP length
};

/*! Counter that a rejected frame increments (frames_not_ipv4_udp, ...). */
SPEAD_API recv_stat stat_for(frame_result r);

/*! A UDP datagram found in a frame; payload points into the frame. */
struct SPEAD_API udp_datagram {
    const std::uint8_t* payload = nullptr;
    std::size_t payload_size = 0;
    std::uint32_t src_ip = 0;
    std::uint32_t dst_ip = 0;
    std::uint16_t src_port = 0;
    std::uint16_t dst_port = 0;
};

/*!
 * \brief Finds the UDP datagram in a captured frame.
 *
 * Accepts only unfragmented IPv4 without options carrying UDP. Bytes after the IPv4
 * total length (Ethernet padding) are ignored. UDP checksums are not verified
 * (loopback captures carry invalid ones, and NICs verify them already).
 */
SPEAD_API frame_result parse_udp_frame(const std::uint8_t* frame,
                                       std::size_t size,
                                       link_type link,
                                       udp_datagram& out);

/*! As parse_udp_frame, from the IPv4 header on (no link-layer header). */
SPEAD_API frame_result parse_ipv4_udp(const std::uint8_t* packet,
                                      std::size_t size,
                                      udp_datagram& out);

/*! True for 224.0.0.0/4. */
constexpr bool is_ipv4_multicast(std::uint32_t ip) { return (ip >> 28) == 0xe; }

/*! The Ethernet address of an IPv4 multicast group: 01:00:5e + its low 23 bits. */
SPEAD_API mac_address multicast_mac(std::uint32_t group);

/*! RFC 1071 checksum of a 20-byte IPv4 header (its checksum field taken as is). */
SPEAD_API std::uint16_t ipv4_header_checksum(const std::uint8_t* header);

/*! Addresses of the frames of one UDP flow. */
struct SPEAD_API udp_flow {
    mac_address src_mac{};
    mac_address dst_mac{}; //!< for multicast: multicast_mac(dst_ip)
    std::uint32_t src_ip = 0;
    std::uint32_t dst_ip = 0;
    std::uint16_t src_port = 0;
    std::uint16_t dst_port = 0;
};

/*!
 * \brief Writes the 42 bytes of Ethernet + IPv4 + UDP headers in front of UDP
 * payloads of one flow.
 *
 * The constant part is prepared once; each frame patches the lengths, the IPv4
 * identification (incremented per frame) and the header checksum. IPv4 has DF set
 * (senders never exceed the MTU) and the UDP checksum is 0 (allowed for IPv4).
 */
class SPEAD_API udp_frame_builder
{
public:
    /*!
     * \param ttl IPv4 time to live (multicast: 1 keeps it on the local network)
     * \param compute_ip_checksum false leaves the IPv4 checksum 0 for the NIC to fill
     *        (checksum offload)
     */
    explicit udp_frame_builder(const udp_flow& flow,
                               std::uint8_t ttl = 1,
                               bool compute_ip_checksum = true);

    /*!
     * Writes the headers to \p frame (at least udp_frame_overhead bytes); the payload
     * goes at frame + udp_frame_overhead. \return the frame size (42 + payload_size).
     * \throws std::invalid_argument if payload_size exceeds max_udp_payload
     */
    std::size_t write_headers(std::uint8_t* frame, std::size_t payload_size);

    /*! IPv4 identification of the next frame (the builder starts at 0). */
    void set_next_identification(std::uint16_t id) { d_next_identification = id; }
    std::uint16_t next_identification() const { return d_next_identification; }
    const udp_flow& flow() const { return d_flow; }

private:
    udp_flow d_flow;
    std::array<std::uint8_t, udp_frame_overhead> d_template{};
    bool d_compute_ip_checksum;
    std::uint16_t d_next_identification = 0;
};

} // namespace spead
} // namespace gr

#endif
