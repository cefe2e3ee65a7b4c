/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "frame.h"

#include <cstring>

namespace spead_emu {
namespace {

constexpr uint16_t ether_type_ipv4 = 0x0800;
constexpr uint8_t protocol_tcp = 6;
constexpr uint8_t protocol_udp = 17;

uint16_t load_be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

void store_be16(uint8_t* p, uint16_t value)
{
    p[0] = static_cast<uint8_t>(value >> 8);
    p[1] = static_cast<uint8_t>(value);
}

// The IPv4 header of a frame, validated enough to checksum it.
struct ipv4_layout {
    size_t offset = 0;        // of the IPv4 header in the frame
    size_t header_length = 0; // IHL * 4
    size_t datagram_end = 0;  // offset + total length, clipped to the frame
    bool fragmented = false;  // MF set or a non-zero fragment offset
    uint8_t protocol = 0;
};

bool locate_ipv4(const uint8_t* frame, size_t length, ipv4_layout& ip)
{
    if (length < ethernet_header_size + 20 || load_be16(frame + 12) != ether_type_ipv4)
        return false;
    const uint8_t* header = frame + ethernet_header_size;
    if ((header[0] >> 4) != 4)
        return false;
    ip.offset = ethernet_header_size;
    ip.header_length = static_cast<size_t>(header[0] & 0x0f) * 4;
    if (ip.header_length < 20 || ip.offset + ip.header_length > length)
        return false;
    const size_t total_length = load_be16(header + 2);
    if (total_length < ip.header_length)
        return false;
    ip.datagram_end = ip.offset + total_length;
    if (ip.datagram_end > length)
        ip.datagram_end = length;
    const uint16_t fragment = load_be16(header + 6);
    ip.fragmented = (fragment & 0x2000) != 0 || (fragment & 0x1fff) != 0;
    ip.protocol = header[9];
    return true;
}

// Sum of the L4 pseudo-header and segment, with the segment's checksum field as it is.
uint32_t l4_sum(const uint8_t* frame, const ipv4_layout& ip)
{
    const uint8_t* header = frame + ip.offset;
    const size_t l4_offset = ip.offset + ip.header_length;
    const size_t l4_length = ip.datagram_end - l4_offset;
    uint8_t pseudo[12];
    memcpy(pseudo, header + 12, 8); // source and destination addresses
    pseudo[8] = 0;
    pseudo[9] = ip.protocol;
    store_be16(pseudo + 10, static_cast<uint16_t>(l4_length));
    return checksum_accumulate(
        frame + l4_offset, l4_length, checksum_accumulate(pseudo, 12));
}

size_t l4_checksum_field(const ipv4_layout& ip)
{
    return ip.offset + ip.header_length + (ip.protocol == protocol_udp ? 6 : 16);
}

bool has_whole_l4_header(const ipv4_layout& ip)
{
    const size_t l4_offset = ip.offset + ip.header_length;
    const size_t needed = ip.protocol == protocol_udp ? 8 : 20;
    return !ip.fragmented && ip.datagram_end >= l4_offset + needed &&
           (ip.protocol == protocol_udp || ip.protocol == protocol_tcp);
}

} // namespace

uint32_t checksum_accumulate(const uint8_t* data, size_t length, uint32_t sum)
{
    for (; length >= 2; data += 2, length -= 2)
        sum += load_be16(data);
    if (length == 1)
        sum += static_cast<uint32_t>(data[0]) << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return sum;
}

uint16_t checksum_finish(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

parsed_frame parse_frame(const uint8_t* frame, size_t length)
{
    parsed_frame parsed;
    if (length < ethernet_header_size)
        return parsed;
    memcpy(parsed.destination_mac.data(), frame, 6);
    memcpy(parsed.source_mac.data(), frame + 6, 6);
    memcpy(&parsed.ether_type, frame + 12, 2);
    ipv4_layout ip;
    if (!locate_ipv4(frame, length, ip))
        return parsed;
    parsed.is_ipv4 = true;
    memcpy(&parsed.ipv4_source, frame + ip.offset + 12, 4);
    memcpy(&parsed.ipv4_destination, frame + ip.offset + 16, 4);
    parsed.ip_protocol = ip.protocol;
    // A NIC's parser sees UDP ports only in the first fragment.
    const bool first_fragment = (load_be16(frame + ip.offset + 6) & 0x1fff) == 0;
    const size_t udp_offset = ip.offset + ip.header_length;
    if (ip.protocol == protocol_udp && first_fragment && udp_offset + 8 <= length) {
        parsed.has_udp = true;
        memcpy(&parsed.udp_source_port, frame + udp_offset, 2);
        memcpy(&parsed.udp_destination_port, frame + udp_offset + 2, 2);
    }
    return parsed;
}

void fill_offloaded_checksums(uint8_t* frame, size_t length)
{
    ipv4_layout ip;
    if (!locate_ipv4(frame, length, ip))
        return;
    uint8_t* header = frame + ip.offset;
    store_be16(header + 10, 0);
    store_be16(header + 10,
               checksum_finish(checksum_accumulate(header, ip.header_length)));
    if (!has_whole_l4_header(ip))
        return;
    const size_t field = l4_checksum_field(ip);
    store_be16(frame + field, 0);
    uint16_t l4 = checksum_finish(l4_sum(frame, ip));
    if (ip.protocol == protocol_udp && l4 == 0)
        l4 = 0xffff; // 0 means "no checksum" in UDP
    store_be16(frame + field, l4);
}

bool offloaded_checksums_valid(const uint8_t* frame,
                               size_t length,
                               bool l4_left_to_hardware)
{
    ipv4_layout ip;
    if (!locate_ipv4(frame, length, ip))
        return false;
    if (checksum_finish(checksum_accumulate(frame + ip.offset, ip.header_length)) != 0)
        return false;
    if (!has_whole_l4_header(ip))
        return false;
    if (l4_left_to_hardware)
        return true;
    if (ip.protocol == protocol_udp && load_be16(frame + l4_checksum_field(ip)) == 0)
        return true;
    return checksum_finish(l4_sum(frame, ip)) == 0;
}

} // namespace spead_emu
