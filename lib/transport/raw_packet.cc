/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/endian.h"
#include "raw_packet.h"
#include <cstring>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

namespace {

constexpr std::uint16_t ethertype_vlan = 0x8100;      // 802.1Q
constexpr std::uint16_t ethertype_qinq = 0x88a8;      // 802.1ad
constexpr std::uint16_t ethertype_qinq_old = 0x9100;  // pre-standard double tagging
constexpr std::size_t linux_sll_protocol_offset = 14; // after type, ARPHRD, address

frame_result classify_ethertype(std::uint16_t ethertype)
{
    if (ethertype == ethertype_ipv4)
        return frame_result::ok;
    if (ethertype == ethertype_vlan || ethertype == ethertype_qinq ||
        ethertype == ethertype_qinq_old)
        return frame_result::vlan;
    return frame_result::not_ipv4_udp;
}

// Offsets in the IPv4 header.
constexpr std::size_t ip_version_ihl = 0;
constexpr std::size_t ip_total_length = 2;
constexpr std::size_t ip_identification = 4;
constexpr std::size_t ip_flags_fragment = 6;
constexpr std::size_t ip_ttl = 8;
constexpr std::size_t ip_protocol = 9;
constexpr std::size_t ip_checksum = 10;
constexpr std::size_t ip_src = 12;
constexpr std::size_t ip_dst = 16;
constexpr std::uint16_t ip_flag_dont_fragment = 0x4000;
constexpr std::uint16_t ip_flag_more_fragments = 0x2000;
constexpr std::uint16_t ip_fragment_offset_mask = 0x1fff;

// Offsets in the UDP header.
constexpr std::size_t udp_src_port = 0;
constexpr std::size_t udp_dst_port = 2;
constexpr std::size_t udp_length = 4;
constexpr std::size_t udp_checksum = 6;

} // namespace

recv_stat stat_for(frame_result r)
{
    switch (r) {
    case frame_result::vlan:
        return recv_stat::frames_vlan;
    case frame_result::ip_options:
        return recv_stat::frames_ip_options;
    case frame_result::fragmented:
        return recv_stat::frames_fragmented;
    case frame_result::truncated:
        return recv_stat::frames_truncated;
    case frame_result::not_ipv4_udp:
    case frame_result::ok:
        break;
    }
    return recv_stat::frames_not_ipv4_udp;
}

frame_result
parse_ipv4_udp(const std::uint8_t* packet, std::size_t size, udp_datagram& out)
{
    if (size < 1)
        return frame_result::truncated;
    if ((packet[ip_version_ihl] >> 4) != 4)
        return frame_result::not_ipv4_udp;
    if (size < ipv4_header_size)
        return frame_result::truncated;
    const unsigned header_words = packet[ip_version_ihl] & 0xf;
    if (header_words < 5)
        return frame_result::not_ipv4_udp; // not a valid IPv4 header
    if (packet[ip_protocol] != ip_protocol_udp)
        return frame_result::not_ipv4_udp;
    if (header_words != 5)
        return frame_result::ip_options;
    const std::uint16_t flags_fragment = load_be16(packet + ip_flags_fragment);
    if ((flags_fragment & ip_flag_more_fragments) ||
        (flags_fragment & ip_fragment_offset_mask))
        return frame_result::fragmented;
    const std::size_t total_length = load_be16(packet + ip_total_length);
    if (total_length > size || total_length < ipv4_header_size + udp_header_size)
        return frame_result::truncated;
    const std::uint8_t* udp = packet + ipv4_header_size;
    const std::size_t datagram_length = load_be16(udp + udp_length);
    if (datagram_length < udp_header_size ||
        datagram_length > total_length - ipv4_header_size)
        return frame_result::truncated;

    out.payload = udp + udp_header_size;
    out.payload_size = datagram_length - udp_header_size;
    out.src_ip = load_be32(packet + ip_src);
    out.dst_ip = load_be32(packet + ip_dst);
    out.src_port = load_be16(udp + udp_src_port);
    out.dst_port = load_be16(udp + udp_dst_port);
    return frame_result::ok;
}

frame_result parse_udp_frame(const std::uint8_t* frame,
                             std::size_t size,
                             link_type link,
                             udp_datagram& out)
{
    std::size_t header_size;
    std::size_t ethertype_offset;
    if (link == link_type::linux_sll) {
        header_size = linux_sll_header_size;
        ethertype_offset = linux_sll_protocol_offset;
    } else {
        header_size = ethernet_header_size;
        ethertype_offset = ethernet_header_size - 2;
    }
    if (size < header_size)
        return frame_result::truncated;
    const frame_result link_result =
        classify_ethertype(load_be16(frame + ethertype_offset));
    if (link_result != frame_result::ok)
        return link_result;
    return parse_ipv4_udp(frame + header_size, size - header_size, out);
}

mac_address multicast_mac(std::uint32_t group)
{
    return { 0x01,
             0x00,
             0x5e,
             std::uint8_t((group >> 16) & 0x7f),
             std::uint8_t(group >> 8),
             std::uint8_t(group) };
}

std::uint16_t ipv4_header_checksum(const std::uint8_t* header)
{
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < ipv4_header_size; i += 2)
        sum += load_be16(header + i);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return std::uint16_t(~sum);
}

udp_frame_builder::udp_frame_builder(const udp_flow& flow,
                                     std::uint8_t ttl,
                                     bool compute_ip_checksum)
    : d_flow(flow), d_compute_ip_checksum(compute_ip_checksum)
{
    std::uint8_t* eth = d_template.data();
    std::memcpy(eth, flow.dst_mac.data(), 6);
    std::memcpy(eth + 6, flow.src_mac.data(), 6);
    store_be16(eth + 12, ethertype_ipv4);

    std::uint8_t* ip = eth + ethernet_header_size;
    ip[ip_version_ihl] = 0x45; // version 4, 5 words, no options
    ip[1] = 0;                 // DSCP / ECN
    store_be16(ip + ip_flags_fragment, ip_flag_dont_fragment);
    ip[ip_ttl] = ttl;
    ip[ip_protocol] = ip_protocol_udp;
    store_be32(ip + ip_src, flow.src_ip);
    store_be32(ip + ip_dst, flow.dst_ip);

    std::uint8_t* udp = ip + ipv4_header_size;
    store_be16(udp + udp_src_port, flow.src_port);
    store_be16(udp + udp_dst_port, flow.dst_port);
    store_be16(udp + udp_checksum, 0); // no checksum: allowed for IPv4
}

std::size_t udp_frame_builder::write_headers(std::uint8_t* frame,
                                             std::size_t payload_size)
{
    if (payload_size > max_udp_payload)
        throw std::invalid_argument(
            "udp_frame_builder: UDP payload of " + std::to_string(payload_size) +
            " bytes exceeds the IPv4 limit of " + std::to_string(max_udp_payload) +
            "; use a smaller packet size");
    std::memcpy(frame, d_template.data(), udp_frame_overhead);
    std::uint8_t* ip = frame + ethernet_header_size;
    store_be16(ip + ip_total_length,
               std::uint16_t(ipv4_header_size + udp_header_size + payload_size));
    store_be16(ip + ip_identification, d_next_identification++);
    if (d_compute_ip_checksum)
        store_be16(ip + ip_checksum, ipv4_header_checksum(ip));
    store_be16(ip + ipv4_header_size + udp_length,
               std::uint16_t(udp_header_size + payload_size));
    return udp_frame_overhead + payload_size;
}

} // namespace spead
} // namespace gr
