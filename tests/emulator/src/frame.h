/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Ethernet/IPv4/UDP parsing and checksums: what the NIC's parser and checksum engine do.
// Pure functions over bytes; header fields are kept in network byte order, as verbs
// flow specs carry them.
#ifndef SPEAD_EMU_FRAME_H
#define SPEAD_EMU_FRAME_H

#include <array>
#include <cstddef>
#include <cstdint>

namespace spead_emu {

constexpr size_t ethernet_header_size = 14;

struct parsed_frame {
    std::array<uint8_t, 6> destination_mac{};
    std::array<uint8_t, 6> source_mac{};
    uint16_t ether_type = 0; // network byte order
    bool is_ipv4 = false;
    uint32_t ipv4_source = 0;      // network byte order
    uint32_t ipv4_destination = 0; // network byte order
    uint8_t ip_protocol = 0;
    bool has_udp = false; // IPv4, protocol 17, first (or only) fragment, header present
    uint16_t udp_source_port = 0;      // network byte order
    uint16_t udp_destination_port = 0; // network byte order
};

// Fields a flow rule can match on. Frames too short for a layer leave it absent.
parsed_frame parse_frame(const uint8_t* frame, size_t length);

// What a NIC does for IBV_SEND_IP_CSUM: fill the IPv4 header checksum and the UDP/TCP
// checksum of an unfragmented IPv4 datagram, in place. Other frames are left alone.
void fill_offloaded_checksums(uint8_t* frame, size_t length);

// Receive-side verdict behind IBV_WC_IP_CSUM_OK: an IPv4 frame whose header checksum and
// UDP/TCP checksum are correct. `l4_left_to_hardware` means the kernel reported the
// sender's L4 checksum as not yet computed (CHECKSUM_PARTIAL on a local path), which a
// real wire would have carried computed.
bool offloaded_checksums_valid(const uint8_t* frame,
                               size_t length,
                               bool l4_left_to_hardware);

// RFC 1071 one's-complement sum, folded, not inverted.
uint32_t checksum_accumulate(const uint8_t* data, size_t length, uint32_t sum = 0);
uint16_t checksum_finish(uint32_t sum);

} // namespace spead_emu

#endif
