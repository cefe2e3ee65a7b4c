/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Encoder byte-exactness: every capture in tests/vectors is rebuilt from first
// principles with send::heap + packet_generator, and every UDP payload must equal the
// one spead2 4.4.1 sent, byte for byte.

#include "byte_helpers.h"
#include "transport/pcap/pcap_file.h"
#include <gnuradio/spead/descriptor.h>
#include <gnuradio/spead/send_heap.h>
#include <gtest/gtest.h>
#include <deque>
#include <random>

using namespace gr::spead;

namespace {

/*! What tests/vectors/README.md says a capture was made from. */
struct capture_recipe {
    const char* name;
    int heap_address_bits;
    std::size_t max_packet_size;
    std::size_t items_per_heap;
    std::size_t words_per_item; //!< big-endian uint32 words
    std::size_t data_heaps;
    std::vector<std::uint16_t> ports; //!< destination i gets heaps i, i + n, ...
};

void PrintTo(const capture_recipe& r, std::ostream* os) { *os << r.name; }

struct sent_packet {
    std::uint16_t port;
    std::vector<std::uint8_t> payload;
};

/*
 * The sender's sequence: heap cnt 1, 2, ... over all destinations (heap i to
 * destination i mod n); the first heap to each destination starts with one
 * descriptor per item; item values are minstd_rand words (default seed), one after
 * another across heaps; then one stop heap per destination, continuing the cnt.
 */
std::vector<sent_packet> encode(const capture_recipe& r)
{
    const flavour f(r.heap_address_bits);
    std::minstd_rand random_words;
    std::vector<sent_packet> out;
    std::uint64_t cnt = 1;
    std::vector<bool> described(r.ports.size(), false);
    auto send = [&](const send::heap& h, std::size_t destination) {
        for (auto& packet : spead_test::packetise(h, cnt, r.max_packet_size))
            out.push_back({ r.ports[destination], std::move(packet) });
        cnt++;
    };

    for (std::size_t i = 0; i < r.data_heaps; i++) {
        const std::size_t destination = i % r.ports.size();
        send::heap h(f);
        if (!described[destination]) {
            for (std::size_t k = 0; k < r.items_per_heap; k++) {
                descriptor d;
                d.id = 0x1000 + k;
                d.name = "Test item " + std::to_string(k);
                d.description = "A test item with arbitrary value";
                d.numpy_header =
                    make_numpy_header(">u4", { std::int64_t(r.words_per_item) });
                h.add_descriptor(d);
            }
            described[destination] = true;
        }
        for (std::size_t k = 0; k < r.items_per_heap; k++) {
            std::vector<std::uint8_t> value;
            value.reserve(4 * r.words_per_item);
            for (std::size_t w = 0; w < r.words_per_item; w++) {
                const std::uint32_t word = std::uint32_t(random_words());
                for (int shift = 24; shift >= 0; shift -= 8)
                    value.push_back(std::uint8_t(word >> shift));
            }
            h.add_item(0x1000 + k, std::move(value));
        }
        send(h, destination);
    }
    for (std::size_t destination = 0; destination < r.ports.size(); destination++) {
        send::heap stop(f);
        stop.add_end();
        send(stop, destination);
    }
    return out;
}

/*! Where two packets first differ; "" when they are equal. */
std::string first_difference(const std::vector<std::uint8_t>& got,
                             const std::vector<std::uint8_t>& want)
{
    const std::size_t n = std::min(got.size(), want.size());
    for (std::size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            return "byte " + std::to_string(i) + ": captured " + std::to_string(got[i]) +
                   ", encoded " + std::to_string(want[i]);
    if (got.size() != want.size())
        return "captured " + std::to_string(got.size()) + " bytes, encoded " +
               std::to_string(want.size());
    return "";
}

class encoder_reproduces_capture : public testing::TestWithParam<capture_recipe>
{
};

} // namespace

TEST_P(encoder_reproduces_capture, every_udp_payload_byte_for_byte)
{
    const capture_recipe& r = GetParam();
    const std::vector<sent_packet> expected = encode(r);

    pcap_file_reader reader(std::string(GR_SPEAD_VECTORS_DIR) + "/" + r.name + ".pcap");
    std::size_t index = 0;
    udp_datagram d;
    while (reader.next(d)) {
        SCOPED_TRACE("packet " + std::to_string(index));
        ASSERT_LT(index, expected.size()) << "the capture has more packets";
        EXPECT_EQ(d.dst_port, expected[index].port);
        EXPECT_EQ(first_difference(
                      std::vector<std::uint8_t>(d.payload, d.payload + d.payload_size),
                      expected[index].payload),
                  "");
        index++;
    }
    EXPECT_EQ(index, expected.size()) << "the capture has fewer packets";
}

INSTANTIATE_TEST_SUITE_P(
    reference_captures,
    encoder_reproduces_capture,
    testing::Values(
        capture_recipe{ "spead64-40_small_desc_stop", 40, 1472, 1, 256, 3, { 7150 } },
        capture_recipe{ "spead64-48_small_desc_stop", 48, 1472, 1, 256, 3, { 7148 } },
        capture_recipe{ "spead64-40_multipacket_1472", 40, 1472, 2, 2048, 3, { 7152 } },
        capture_recipe{ "spead64-48_multipacket_8972", 48, 8972, 4, 4096, 2, { 7154 } },
        capture_recipe{ "spead64-40_immediate", 40, 1472, 2, 1, 3, { 7156 } },
        capture_recipe{ "spead64-48_immediate", 48, 1472, 2, 1, 3, { 7158 } },
        capture_recipe{
            "spead64-40_two_substreams", 40, 1472, 1, 1024, 4, { 7162, 7163 } }),
    [](const testing::TestParamInfo<capture_recipe>& info) {
        std::string name = info.param.name;
        for (char& c : name)
            if (c == '-')
                c = '_';
        return name;
    });
