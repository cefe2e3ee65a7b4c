/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "byte_helpers.h"
#include "error_message.h"
#include "temp_file.h"
#include "transport/pcap/pcap_file.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>

using namespace gr::spead;
using spead_test::from_hex;
using testing::HasSubstr;

namespace {

std::string vector_path(const std::string& name)
{
    return std::string(GR_SPEAD_VECTORS_DIR) + "/" + name;
}

std::vector<std::uint8_t> read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

/*! The message of the std::runtime_error that \p f throws ("" if none). */
template <typename F>
std::string runtime_error_message(F f)
{
    return spead_test::error_message<std::runtime_error>(f);
}

/*! Writes raw frames to a capture of the given link type with libpcap itself. */
void write_raw_capture(const std::string& path,
                       int dlt,
                       const std::vector<std::vector<std::uint8_t>>& frames)
{
    pcap_t* dead = pcap_open_dead(dlt, 65535);
    pcap_dumper_t* dumper = pcap_dump_open(dead, path.c_str());
    ASSERT_NE(dumper, nullptr);
    for (const auto& frame : frames) {
        pcap_pkthdr header{};
        header.caplen = bpf_u_int32(frame.size());
        header.len = bpf_u_int32(frame.size());
        pcap_dump(reinterpret_cast<u_char*>(dumper), &header, frame.data());
    }
    pcap_dump_close(dumper);
    pcap_close(dead);
}

/* A Linux cooked frame: 127.0.0.1:1000 → 127.0.0.1:dst_port, payload "abcd". */
std::vector<std::uint8_t> cooked_udp_frame(std::uint16_t dst_port)
{
    auto frame = from_hex("0000 0304 0006 000000000000 0000 0800"
                          "4500 0020 0001 4000 4011 0000 7f000001 7f000001"
                          "03e8 0000 000c 0000"
                          "61626364");
    frame[16 + 20 + 2] = std::uint8_t(dst_port >> 8);
    frame[16 + 20 + 3] = std::uint8_t(dst_port);
    return frame;
}

struct capture_summary {
    const char* file;
    std::size_t packets;
    std::map<std::uint16_t, std::size_t> packets_per_port;
};

const capture_summary captures[] = {
    { "spead64-40_immediate.pcap", 4, { { 7156, 4 } } },
    { "spead64-48_immediate.pcap", 4, { { 7158, 4 } } },
    { "spead64-40_multipacket_1472.pcap", 37, { { 7152, 37 } } },
    { "spead64-48_multipacket_8972.pcap", 17, { { 7154, 17 } } },
    { "spead64-40_small_desc_stop.pcap", 4, { { 7150, 4 } } },
    { "spead64-48_small_desc_stop.pcap", 4, { { 7148, 4 } } },
    { "spead64-40_two_substreams.pcap", 16, { { 7162, 8 }, { 7163, 8 } } },
};

} // namespace

TEST(pcap_file_reader, reads_every_reference_capture)
{
    for (const capture_summary& c : captures) {
        SCOPED_TRACE(c.file);
        pcap_file_reader reader(vector_path(c.file));
        EXPECT_EQ(reader.get_link_type(), link_type::ethernet);
        std::map<std::uint16_t, std::size_t> per_port;
        udp_datagram d;
        while (reader.next(d)) {
            per_port[d.dst_port]++;
            EXPECT_EQ(d.src_ip, 0x7f000001u);
            EXPECT_EQ(d.dst_ip, 0x7f000001u);
            ASSERT_GE(d.payload_size, 8u);
            EXPECT_EQ(d.payload[0], 0x53); // every datagram is a SPEAD packet
        }
        EXPECT_TRUE(reader.at_end());
        EXPECT_EQ(reader.frames_read(), c.packets);
        EXPECT_EQ(reader.datagrams_kept(), c.packets);
        EXPECT_EQ(per_port, c.packets_per_port);
        for (const auto& counter : reader.stats().items())
            EXPECT_EQ(counter.second, 0u) << counter.first;
    }
}

TEST(pcap_file_reader, payload_sizes_match_the_capture)
{
    // spead64-40_small_desc_stop: heap 1 with descriptor, two data heaps, stop heap
    pcap_file_reader reader(vector_path("spead64-40_small_desc_stop.pcap"));
    std::vector<std::size_t> sizes;
    udp_datagram d;
    while (reader.next(d))
        sizes.push_back(d.payload_size);
    EXPECT_EQ(sizes, (std::vector<std::size_t>{ 1268, 1072, 1072, 57 }));
}

TEST(pcap_file_reader, keeps_only_the_chosen_destination_port)
{
    pcap_file_reader reader(vector_path("spead64-40_two_substreams.pcap"), 7163);
    std::size_t kept = 0;
    udp_datagram d;
    while (reader.next(d)) {
        EXPECT_EQ(d.dst_port, 7163);
        kept++;
    }
    EXPECT_EQ(kept, 8u);
    EXPECT_EQ(reader.stats()[recv_stat::frames_filtered], 8u);
    EXPECT_EQ(reader.frames_read(), 16u);
}

TEST(pcap_file_reader, next_batch_returns_full_batches_then_the_rest_then_zero)
{
    pcap_file_reader single(vector_path("spead64-40_multipacket_1472.pcap"));
    std::vector<std::vector<std::uint8_t>> expected;
    udp_datagram d;
    while (single.next(d))
        expected.emplace_back(d.payload, d.payload + d.payload_size);

    pcap_file_reader reader(vector_path("spead64-40_multipacket_1472.pcap"));
    std::vector<recv::packet_view> batch;
    std::vector<std::size_t> batch_sizes;
    std::vector<std::vector<std::uint8_t>> got;
    while (reader.next_batch(batch, 8) > 0) {
        batch_sizes.push_back(batch.size());
        for (const auto& view : batch)
            got.emplace_back(view.data, view.data + view.size);
    }
    EXPECT_EQ(batch_sizes, (std::vector<std::size_t>{ 8, 8, 8, 8, 5 }));
    EXPECT_EQ(got, expected);
    EXPECT_EQ(reader.next_batch(batch, 8), 0u);
    EXPECT_TRUE(batch.empty());
}

TEST(pcap_file_reader, missing_file_error_names_file_and_cause)
{
    const spead_test::temp_file file("does_not_exist.pcap");
    const auto message = runtime_error_message([&] { pcap_file_reader reader(file); });
    EXPECT_THAT(message, HasSubstr(file.path));
    EXPECT_THAT(message, HasSubstr("No such file"));
}

TEST(pcap_file_reader, non_capture_file_error_names_file)
{
    const std::string path = vector_path("README.md");
    const auto message = runtime_error_message([&] { pcap_file_reader reader(path); });
    EXPECT_THAT(message, HasSubstr(path));
    EXPECT_THAT(message, HasSubstr("cannot read capture"));
}

TEST(pcap_file_reader, unsupported_link_type_error_names_it)
{
    const spead_test::temp_file file("raw_ip.pcap");
    write_raw_capture(file, DLT_RAW, {});
    const auto message = runtime_error_message([&] { pcap_file_reader reader(file); });
    EXPECT_THAT(message, HasSubstr(file.path));
    EXPECT_THAT(message, HasSubstr("RAW"));
    EXPECT_THAT(message, HasSubstr("not supported"));
}

TEST(pcap_file_reader, truncated_file_throws_while_reading)
{
    const spead_test::temp_file file("truncated.pcap");
    auto bytes = read_file(vector_path("spead64-40_small_desc_stop.pcap"));
    bytes.resize(bytes.size() - 10);
    write_file(file, bytes);
    pcap_file_reader reader(file);
    udp_datagram d;
    for (int i = 0; i < 3; i++)
        ASSERT_TRUE(reader.next(d));
    const auto message = runtime_error_message([&] { reader.next(d); });
    EXPECT_THAT(message, HasSubstr(file.path));
}

TEST(pcap_file_reader, reads_linux_cooked_capture_and_counts_rejected_frames)
{
    auto vlan = cooked_udp_frame(7148);
    vlan[14] = 0x81;
    vlan[15] = 0x00;
    auto arp = cooked_udp_frame(7148);
    arp[15] = 0x06;
    auto options = cooked_udp_frame(7148);
    options[16] = 0x46;
    auto fragment = cooked_udp_frame(7148);
    fragment[16 + 6] = 0x20;
    auto truncated = cooked_udp_frame(7148);
    truncated.pop_back();

    const spead_test::temp_file file("cooked.pcap");
    write_raw_capture(file,
                      DLT_LINUX_SLL,
                      { cooked_udp_frame(7148),
                        vlan,
                        arp,
                        options,
                        fragment,
                        truncated,
                        cooked_udp_frame(9999),
                        cooked_udp_frame(7148) });
    pcap_file_reader reader(file, 7148);
    EXPECT_EQ(reader.get_link_type(), link_type::linux_sll);
    std::vector<std::string> payloads;
    udp_datagram d;
    while (reader.next(d))
        payloads.emplace_back(reinterpret_cast<const char*>(d.payload), d.payload_size);
    EXPECT_EQ(payloads, (std::vector<std::string>{ "abcd", "abcd" }));
    const recv_stats& s = reader.stats();
    for (const recv_stat rejected : { recv_stat::frames_vlan,
                                      recv_stat::frames_not_ipv4_udp,
                                      recv_stat::frames_ip_options,
                                      recv_stat::frames_fragmented,
                                      recv_stat::frames_truncated,
                                      recv_stat::frames_filtered })
        EXPECT_EQ(s[rejected], 1u) << stat_name(rejected);
    EXPECT_EQ(reader.frames_read(), 8u);
}

TEST(pcap_file_writer, round_trips_payloads_flows_and_order)
{
    const spead_test::temp_file file("round_trip.pcap");
    udp_flow to_a;
    to_a.src_ip = 0x0a000001;
    to_a.dst_ip = 0xef000001;
    to_a.dst_mac = multicast_mac(to_a.dst_ip);
    to_a.src_port = 40000;
    to_a.dst_port = 7148;
    udp_flow to_b = to_a;
    to_b.dst_port = 7149;
    const std::vector<std::uint8_t> first(1472, 0x11), second(57, 0x22),
        third(8968, 0x33);
    {
        pcap_file_writer writer(file);
        writer.write(to_a, first.data(), first.size());
        writer.write(to_b, second.data(), second.size());
        writer.write(to_a, third.data(), third.size());
        writer.flush();
        EXPECT_EQ(writer.packets_written(), 3u);
    }
    pcap_file_reader reader(file);
    udp_datagram d;
    ASSERT_TRUE(reader.next(d));
    EXPECT_EQ(std::vector<std::uint8_t>(d.payload, d.payload + d.payload_size), first);
    EXPECT_EQ(d.src_ip, 0x0a000001u);
    EXPECT_EQ(d.dst_ip, 0xef000001u);
    EXPECT_EQ(d.src_port, 40000);
    EXPECT_EQ(d.dst_port, 7148);
    ASSERT_TRUE(reader.next(d));
    EXPECT_EQ(std::vector<std::uint8_t>(d.payload, d.payload + d.payload_size), second);
    EXPECT_EQ(d.dst_port, 7149);
    ASSERT_TRUE(reader.next(d));
    EXPECT_EQ(std::vector<std::uint8_t>(d.payload, d.payload + d.payload_size), third);
    EXPECT_FALSE(reader.next(d));
}

TEST(pcap_file_writer, writes_ethernet_frames_with_timestamps_and_counting_ids)
{
    const spead_test::temp_file file("frames.pcap");
    udp_flow flow;
    flow.src_ip = 0x7f000001;
    flow.dst_ip = 0x7f000001;
    flow.src_port = 45947;
    flow.dst_port = 7150;
    const std::vector<std::uint8_t> payload = { 1, 2, 3, 4 };
    const auto when =
        pcap_file_writer::clock::time_point(std::chrono::microseconds(1700000000123456));
    {
        pcap_file_writer writer(file, 64);
        writer.write(flow, payload.data(), payload.size(), when);
        writer.write(flow, payload.data(), payload.size(), when);
    }
    char errbuf[PCAP_ERRBUF_SIZE];
    pcap_t* handle = pcap_open_offline(file.path.c_str(), errbuf);
    ASSERT_NE(handle, nullptr) << errbuf;
    EXPECT_EQ(pcap_datalink(handle), DLT_EN10MB);
    pcap_pkthdr* header;
    const u_char* data;
    ASSERT_EQ(pcap_next_ex(handle, &header, &data), 1);
    EXPECT_EQ(header->ts.tv_sec, 1700000000);
    EXPECT_EQ(header->ts.tv_usec, 123456);
    EXPECT_EQ(header->caplen, 46u);
    EXPECT_EQ(header->len, 46u);
    EXPECT_EQ(std::vector<std::uint8_t>(data, data + 46),
              from_hex("000000000000 000000000000 0800"
                       "4500 0020 0000 4000 4011 3ccb 7f000001 7f000001"
                       "b37b 1bee 000c 0000"
                       "01020304"));
    ASSERT_EQ(pcap_next_ex(handle, &header, &data), 1);
    EXPECT_EQ(data[14 + 4], 0x00);
    EXPECT_EQ(data[14 + 5], 0x01); // identification counts up
    pcap_close(handle);
}

TEST(pcap_file_writer, gathers_packetiser_pieces)
{
    const spead_test::temp_file file("pieces.pcap");
    const std::vector<std::uint8_t> head = { 0x53, 0x04 }, tail = { 9, 9, 9 };
    const send::packet_piece pieces[] = { { head.data(), head.size() },
                                          { tail.data(), tail.size() } };
    udp_flow flow;
    {
        pcap_file_writer writer(file);
        writer.write(flow, pieces, 2);
    }
    pcap_file_reader reader(file);
    udp_datagram d;
    ASSERT_TRUE(reader.next(d));
    EXPECT_EQ(std::vector<std::uint8_t>(d.payload, d.payload + d.payload_size),
              (std::vector<std::uint8_t>{ 0x53, 0x04, 9, 9, 9 }));
}

TEST(pcap_file_writer, unwritable_path_error_names_file)
{
    const std::string path = "/nonexistent-dir/out.pcap";
    const auto message = runtime_error_message([&] { pcap_file_writer writer(path); });
    EXPECT_THAT(message, HasSubstr(path));
    EXPECT_THAT(message, HasSubstr("cannot create capture"));
}

TEST(pcap_file_writer, rejects_payload_beyond_ipv4_limit)
{
    const spead_test::temp_file file("too_big.pcap");
    pcap_file_writer writer(file);
    std::vector<std::uint8_t> payload(max_udp_payload + 1);
    EXPECT_THROW(writer.write(udp_flow(), payload.data(), payload.size()),
                 std::invalid_argument);
}
