/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "byte_helpers.h"
#include "transport/raw_packet.h"
#include <gtest/gtest.h>
#include <tuple>

using namespace gr::spead;
using spead_test::from_hex;

namespace {

/* The first frame of tests/vectors/spead64-40_small_desc_stop.pcap up to the UDP
 * payload, then a 4-byte payload: loopback, zero MACs, 127.0.0.1:45947 → :7150. */
std::vector<std::uint8_t> ethernet_frame()
{
    return from_hex("000000000000 000000000000 0800"
                    "4500 0020 b107 4000 4011 0000 7f000001 7f000001"
                    "b37b 1bee 000c 0000"
                    "01020304");
}

/* The same datagram behind a Linux cooked header (a capture on "any"). */
std::vector<std::uint8_t> linux_sll_frame()
{
    auto frame = from_hex("0000 0304 0006 000000000000 0000 0800");
    const auto eth = ethernet_frame();
    frame.insert(frame.end(), eth.begin() + 14, eth.end());
    return frame;
}

constexpr std::size_t ip = 14;  // IPv4 header offset in ethernet_frame()
constexpr std::size_t udp = 34; // UDP header offset

frame_result parse(const std::vector<std::uint8_t>& frame,
                   link_type link = link_type::ethernet)
{
    udp_datagram d;
    return parse_udp_frame(frame.data(), frame.size(), link, d);
}

/* The datagram parse_udp_frame() finds in \p frame, which it must accept. */
udp_datagram parsed(const std::vector<std::uint8_t>& frame,
                    link_type link = link_type::ethernet)
{
    udp_datagram d{};
    EXPECT_EQ(parse_udp_frame(frame.data(), frame.size(), link, d), frame_result::ok);
    return d;
}

/* parse() of ethernet_frame() with the bytes at the given offsets replaced. */
frame_result
parse_edited(std::initializer_list<std::pair<std::size_t, std::uint8_t>> edits)
{
    auto frame = ethernet_frame();
    for (const auto& [offset, value] : edits)
        frame[offset] = value;
    return parse(frame);
}

/* parse() of ethernet_frame() with \p ethertype (or a VLAN TPID) in place of IPv4's. */
frame_result parse_with_ethertype(std::uint16_t ethertype)
{
    return parse_edited(
        { { 12, std::uint8_t(ethertype >> 8) }, { 13, std::uint8_t(ethertype) } });
}

} // namespace

TEST(raw_packet_parse, finds_udp_payload_addresses_and_ports_in_ethernet_frame)
{
    const auto frame = ethernet_frame();
    const udp_datagram d = parsed(frame);
    EXPECT_EQ(d.payload, frame.data() + 42);
    EXPECT_EQ(d.payload_size, 4u);
    EXPECT_EQ(std::tie(d.src_ip, d.src_port, d.dst_ip, d.dst_port),
              std::make_tuple(0x7f000001u, 45947, 0x7f000001u, 7150));
}

TEST(raw_packet_parse, finds_udp_payload_in_linux_cooked_frame)
{
    const auto frame = linux_sll_frame();
    const udp_datagram d = parsed(frame, link_type::linux_sll);
    EXPECT_EQ(d.payload, frame.data() + 44);
    EXPECT_EQ(d.payload_size, 4u);
    EXPECT_EQ(d.dst_port, 7150);
}

TEST(raw_packet_parse, ignores_ethernet_padding_after_ip_total_length)
{
    auto frame = ethernet_frame();
    frame.resize(60, 0); // minimum Ethernet frame
    const udp_datagram d = parsed(frame);
    EXPECT_EQ(d.payload_size, 4u);
}

TEST(raw_packet_parse, does_not_verify_udp_checksum)
{
    // A wrong checksum, as in the loopback captures.
    EXPECT_EQ(parse_edited({ { udp + 6, 0xde }, { udp + 7, 0xad } }), frame_result::ok);
}

TEST(raw_packet_parse, accepts_dont_fragment)
{
    // DF, as every captured frame has.
    EXPECT_EQ(parse_edited({ { ip + 6, 0x40 } }), frame_result::ok);
}

TEST(raw_packet_parse, rejects_vlan_tagged_frames)
{
    for (const std::uint16_t tpid : { 0x8100, 0x88a8, 0x9100 })
        EXPECT_EQ(parse_with_ethertype(tpid), frame_result::vlan) << std::hex << tpid;
    auto cooked = linux_sll_frame();
    cooked[14] = 0x81;
    cooked[15] = 0x00;
    EXPECT_EQ(parse(cooked, link_type::linux_sll), frame_result::vlan);
}

TEST(raw_packet_parse, rejects_other_ethertypes_as_not_ipv4_udp)
{
    for (const std::uint16_t ethertype : { 0x0806, 0x86dd, 0x88cc })
        EXPECT_EQ(parse_with_ethertype(ethertype), frame_result::not_ipv4_udp)
            << std::hex << ethertype;
}

TEST(raw_packet_parse, rejects_other_ip_protocols_as_not_ipv4_udp)
{
    // TCP
    EXPECT_EQ(parse_edited({ { ip + 9, 6 } }), frame_result::not_ipv4_udp);
}

TEST(raw_packet_parse, rejects_wrong_ip_version_as_not_ipv4_udp)
{
    auto frame = ethernet_frame();
    frame[ip] = 0x65;
    EXPECT_EQ(parse(frame), frame_result::not_ipv4_udp);
    frame[ip] = 0x44; // IHL below 5: not a valid IPv4 header
    EXPECT_EQ(parse(frame), frame_result::not_ipv4_udp);
}

TEST(raw_packet_parse, rejects_ip_options)
{
    EXPECT_EQ(parse_edited({ { ip, 0x46 } }), frame_result::ip_options);
}

TEST(raw_packet_parse, rejects_first_fragment_with_more_fragments_flag)
{
    EXPECT_EQ(parse_edited({ { ip + 6, 0x20 } }), frame_result::fragmented);
}

TEST(raw_packet_parse, rejects_later_fragment_with_offset)
{
    EXPECT_EQ(parse_edited({ { ip + 6, 0x00 }, { ip + 7, 0xb9 } }),
              frame_result::fragmented);
}

TEST(raw_packet_parse, rejects_frames_shorter_than_their_headers)
{
    const auto frame = ethernet_frame();
    for (const std::size_t size : { 0, 13, 14, 15, 33, 41 }) {
        udp_datagram d;
        EXPECT_EQ(parse_udp_frame(frame.data(), size, link_type::ethernet, d),
                  frame_result::truncated)
            << size;
    }
    udp_datagram d;
    const auto cooked = linux_sll_frame();
    EXPECT_EQ(parse_udp_frame(cooked.data(), 15, link_type::linux_sll, d),
              frame_result::truncated);
}

TEST(raw_packet_parse, rejects_frames_shorter_than_ip_total_length)
{
    auto frame = ethernet_frame();
    frame.pop_back(); // snaplen cut the last payload byte
    EXPECT_EQ(parse(frame), frame_result::truncated);
}

TEST(raw_packet_parse, rejects_udp_length_beyond_ip_payload)
{
    // A UDP length of 13 > 12 bytes of UDP.
    EXPECT_EQ(parse_edited({ { udp + 5, 0x0d } }), frame_result::truncated);
}

TEST(raw_packet_parse, rejects_udp_length_below_its_header)
{
    EXPECT_EQ(parse_edited({ { udp + 5, 0x07 } }), frame_result::truncated);
}

TEST(raw_packet_parse, rejects_ip_total_length_below_ip_and_udp_headers)
{
    EXPECT_EQ(parse_edited({ { ip + 3, 27 } }), frame_result::truncated);
}

TEST(raw_packet_stats, each_rejection_has_its_counter)
{
    const std::pair<frame_result, recv_stat> expected[] = {
        { frame_result::not_ipv4_udp, recv_stat::frames_not_ipv4_udp },
        { frame_result::vlan, recv_stat::frames_vlan },
        { frame_result::ip_options, recv_stat::frames_ip_options },
        { frame_result::fragmented, recv_stat::frames_fragmented },
        { frame_result::truncated, recv_stat::frames_truncated },
    };
    for (const auto& [result, stat] : expected)
        EXPECT_EQ(stat_for(result), stat) << int(result);
}

TEST(raw_packet_build, multicast_mac_is_01_00_5e_and_low_23_bits)
{
    EXPECT_EQ(multicast_mac(0xef810203),
              (mac_address{ 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 }));
    EXPECT_EQ(multicast_mac(0xe0000001),
              (mac_address{ 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 }));
    EXPECT_TRUE(is_ipv4_multicast(0xe0000001));
    EXPECT_TRUE(is_ipv4_multicast(0xefffffff));
    EXPECT_FALSE(is_ipv4_multicast(0x7f000001));
    EXPECT_FALSE(is_ipv4_multicast(0xf0000000));
}

TEST(raw_packet_build, ipv4_checksum_matches_a_captured_header)
{
    // First frame of spead64-40_immediate.pcap: checksum 0x8834
    auto header = from_hex("450001d8b2de4000401100007f0000017f000001");
    EXPECT_EQ(ipv4_header_checksum(header.data()), 0x8834);
}

TEST(raw_packet_build, writes_ethernet_ipv4_udp_headers)
{
    udp_flow flow;
    flow.src_mac = { 0x02, 0, 0, 0, 0, 0x01 };
    flow.dst_mac = multicast_mac(0xef010203);
    flow.src_ip = 0x0a000001;
    flow.dst_ip = 0xef010203;
    flow.src_port = 5000;
    flow.dst_port = 7148;
    udp_frame_builder builder(flow, 4);
    builder.set_next_identification(0x1234);
    std::vector<std::uint8_t> frame(42 + 100);
    EXPECT_EQ(builder.write_headers(frame.data(), 100), 142u);
    EXPECT_EQ(std::vector<std::uint8_t>(frame.begin(), frame.begin() + 42),
              from_hex("01005e010203 020000000001 0800"
                       "4500 0080 1234 4000 0411 6934 0a000001 ef010203"
                       "1388 1bec 006c 0000"));
    EXPECT_EQ(builder.next_identification(), 0x1235);
}

TEST(raw_packet_build, leaves_ip_checksum_zero_for_offload)
{
    udp_flow flow;
    flow.src_ip = 0x0a000001;
    flow.dst_ip = 0x0a000002;
    udp_frame_builder builder(flow, 64, false);
    std::vector<std::uint8_t> frame(42);
    builder.write_headers(frame.data(), 0);
    EXPECT_EQ(frame[ip + 10], 0);
    EXPECT_EQ(frame[ip + 11], 0);
}

TEST(raw_packet_build, built_frame_parses_back)
{
    udp_flow flow;
    flow.src_ip = 0xc0a80001;
    flow.dst_ip = 0xc0a80002;
    flow.src_port = 1;
    flow.dst_port = 65535;
    udp_frame_builder builder(flow);
    std::vector<std::uint8_t> frame(42 + 8972);
    frame.resize(builder.write_headers(frame.data(), 8972));
    const udp_datagram d = parsed(frame);
    EXPECT_EQ(d.payload, frame.data() + 42);
    EXPECT_EQ(d.payload_size, 8972u);
    EXPECT_EQ(std::tie(d.src_ip, d.src_port, d.dst_ip, d.dst_port),
              std::make_tuple(0xc0a80001u, 1, 0xc0a80002u, 65535));
    EXPECT_EQ(ipv4_header_checksum(frame.data() + ip), 0); // a valid header sums to 0
}

TEST(raw_packet_build, rejects_payload_beyond_ipv4_limit)
{
    udp_flow flow;
    udp_frame_builder builder(flow);
    std::vector<std::uint8_t> frame(42 + 65508);
    EXPECT_THROW(builder.write_headers(frame.data(), 65508), std::invalid_argument);
    EXPECT_EQ(builder.write_headers(frame.data(), 65507), 42u + 65507);
}
