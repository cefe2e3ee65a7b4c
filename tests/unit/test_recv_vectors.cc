/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Decoding each spead2 reference capture gives exactly what spead2's own receiver
// printed for it (the .spead2_recv.txt next to it) and what tests/vectors/README.md
// says: heap cnts, items with lengths and immediate values, descriptors, payload values
// and the shared statistics.

#include "protocol/heap_assembler.h"
#include "transport/pcap/pcap_file.h"
#include <gnuradio/spead/item_ids.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>

using namespace gr::spead;

namespace {

/*! What spead2_recv printed: heaps with items and descriptors, then statistics. */
struct spead2_listing {
    struct item {
        std::uint64_t id;
        std::size_t length;
        bool has_value;
        std::uint64_t value;
        bool operator<(const item& o) const
        {
            return std::tie(id, length, has_value, value) <
                   std::tie(o.id, o.length, o.has_value, o.value);
        }
        bool operator==(const item& o) const { return !(*this < o) && !(o < *this); }
    };
    struct descriptor_text {
        std::string name;
        std::uint64_t id;
        std::string description;
        std::string dtype;
    };
    struct heap {
        std::uint64_t cnt;
        std::vector<item> items;
        std::vector<descriptor_text> descriptors;
    };
    std::vector<heap> heaps;
    std::map<std::string, std::uint64_t> stats;
};

spead2_listing parse_listing(const std::string& path)
{
    std::ifstream in(path);
    EXPECT_TRUE(in) << path;
    spead2_listing out;
    const std::regex heap_re(R"(^Received heap (\d+)$)");
    const std::regex item_re(R"(^0x([0-9a-f]+) = \[(\d+) bytes\](?: = 0x([0-9a-f]+))?$)");
    const std::regex desc_re(R"(^Descriptor for (.*) \(0x([0-9a-f]+)\)$)");
    const std::regex stat_re(R"(^([a-z_]+): (\d+)$)");
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_match(line, m, heap_re)) {
            out.heaps.push_back({ std::stoull(m[1]), {}, {} });
        } else if (std::regex_match(line, m, item_re)) {
            const bool has_value = m[3].matched;
            out.heaps.back().items.push_back(
                { std::stoull(m[1], nullptr, 16),
                  std::stoull(m[2]),
                  has_value,
                  has_value ? std::stoull(m[3], nullptr, 16) : 0 });
        } else if (std::regex_match(line, m, desc_re)) {
            spead2_listing::descriptor_text d{
                m[1], std::stoull(m[2], nullptr, 16), "", ""
            };
            std::getline(in, line);
            d.description = line.substr(line.find(':') + 2);
            std::getline(in, line); // format
            std::getline(in, line);
            d.dtype = line.substr(line.find(':') + 1);
            d.dtype.erase(0, d.dtype.find_first_not_of(' '));
            std::getline(in, line); // shape
            out.heaps.back().descriptors.push_back(d);
        } else if (std::regex_match(line, m, stat_re)) {
            out.stats[m[1]] = std::stoull(m[2]);
        }
    }
    return out;
}

struct decoded {
    std::vector<recv::heap> heaps;
    recv_stats stats;
};

decoded decode_capture(const std::string& path)
{
    decoded out;
    recv::heap_assembler assembler(
        recv::assembler_config(),
        recv::detail::heap_pool::create(8),
        [&out](recv::heap&& h) { out.heaps.push_back(std::move(h)); });
    pcap_file_reader reader(path);
    std::vector<recv::packet_view> batch;
    bool running = true;
    while (running && reader.next_batch(batch, 64) > 0) {
        assembler.note_batch(batch.size());
        for (const auto& p : batch)
            if (!assembler.add_packet(p.data, p.size)) {
                running = false; // a stop heap: spead2 stops reading there too
                break;
            }
    }
    assembler.stop();
    out.stats = assembler.stats();
    return out;
}

std::string vector_path(const std::string& name)
{
    return std::string(GR_SPEAD_VECTORS_DIR) + "/" + name;
}

class recv_vectors : public ::testing::TestWithParam<std::string>
{
};

} // namespace

TEST_P(recv_vectors, heaps_items_descriptors_and_stats_match_spead2)
{
    const std::string name = GetParam();
    const spead2_listing expected = parse_listing(vector_path(name + ".spead2_recv.txt"));
    const decoded got = decode_capture(vector_path(name + ".pcap"));

    ASSERT_EQ(got.heaps.size(), expected.heaps.size());
    for (std::size_t i = 0; i < got.heaps.size(); i++) {
        SCOPED_TRACE("heap " + std::to_string(expected.heaps[i].cnt));
        const recv::heap& h = got.heaps[i];
        EXPECT_EQ(h.cnt(), expected.heaps[i].cnt);
        EXPECT_TRUE(h.is_complete());
        // spead2 prints items sorted (immediates by value); compare as sorted lists
        std::vector<spead2_listing::item> items;
        for (const auto& it : h.items())
            items.push_back({ it.id, it.length, it.is_immediate, it.immediate_value });
        std::vector<spead2_listing::item> want = expected.heaps[i].items;
        std::sort(items.begin(), items.end());
        std::sort(want.begin(), want.end());
        EXPECT_EQ(items, want);

        const auto descriptors = h.descriptors();
        ASSERT_EQ(descriptors.size(), expected.heaps[i].descriptors.size());
        for (std::size_t d = 0; d < descriptors.size(); d++) {
            const auto& want_d = expected.heaps[i].descriptors[d];
            EXPECT_EQ(descriptors[d].name, want_d.name);
            EXPECT_EQ(descriptors[d].id, want_d.id);
            EXPECT_EQ(descriptors[d].description, want_d.description);
            EXPECT_EQ(descriptors[d].numpy_header, want_d.dtype);
            EXPECT_TRUE(descriptors[d].format.empty());
            EXPECT_TRUE(descriptors[d].shape.empty());
        }
    }
    for (const char* stat : { "heaps",
                              "incomplete_heaps_evicted",
                              "incomplete_heaps_flushed",
                              "packets",
                              "single_packet_heaps" })
        EXPECT_EQ(got.stats.at(stat), expected.stats.at(stat)) << stat;
    // beyond spead2: nothing was rejected
    for (recv_stat s : { recv_stat::packets_truncated,
                         recv_stat::packets_bad_header,
                         recv_stat::packets_bad_specials,
                         recv_stat::packets_duplicate,
                         recv_stat::items_bad_address })
        EXPECT_EQ(got.stats[s], 0u) << stat_name(s);
}

TEST_P(recv_vectors, payload_is_the_minstd_rand_sequence_in_heap_cnt_order)
{
    // README: data values are big-endian uint32 words of std::minstd_rand (default
    // seed), one after another across heaps; immediates draw from the same sequence.
    const decoded got = decode_capture(vector_path(GetParam() + ".pcap"));
    std::vector<const recv::heap*> by_cnt;
    for (const auto& h : got.heaps)
        by_cnt.push_back(&h);
    std::sort(
        by_cnt.begin(), by_cnt.end(), [](auto a, auto b) { return a->cnt() < b->cnt(); });
    std::minstd_rand rng;
    std::size_t words = 0;
    for (const recv::heap* h : by_cnt)
        for (const auto& it : h->items()) {
            if (it.id < 0x1000)
                continue;
            if (it.is_immediate) {
                EXPECT_EQ(it.immediate_value, std::uint64_t(rng()))
                    << "heap " << h->cnt();
                words++;
                continue;
            }
            ASSERT_EQ(it.length % 4, 0u);
            for (std::size_t k = 0; k < it.length; k += 4, words++) {
                const std::uint32_t word = (std::uint32_t(it.data[k]) << 24) |
                                           (std::uint32_t(it.data[k + 1]) << 16) |
                                           (std::uint32_t(it.data[k + 2]) << 8) |
                                           it.data[k + 3];
                ASSERT_EQ(word, std::uint32_t(rng()))
                    << "heap " << h->cnt() << " item " << it.id << " byte " << k;
            }
        }
    EXPECT_GT(words, 0u);
}

INSTANTIATE_TEST_SUITE_P(captures,
                         recv_vectors,
                         ::testing::Values("spead64-40_immediate",
                                           "spead64-48_immediate",
                                           "spead64-40_small_desc_stop",
                                           "spead64-48_small_desc_stop",
                                           "spead64-40_multipacket_1472",
                                           "spead64-48_multipacket_8972",
                                           "spead64-40_two_substreams"));

TEST(recv_vectors_facts, items_keep_wire_order_as_the_readme_lists_them)
{
    // multipacket_8972 heap 1: 4 x DESCRIPTOR, then 0x1000..0x1003 at 756, 17140, ...
    const decoded got = decode_capture(vector_path("spead64-48_multipacket_8972.pcap"));
    ASSERT_GE(got.heaps.size(), 1u);
    const auto& items = got.heaps[0].items();
    ASSERT_EQ(items.size(), 8u);
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(items[i].id, item_id::descriptor);
    const std::uint64_t addresses[] = { 756, 17140, 33524, 49908 };
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(items[4 + i].id, 0x1000u + i);
        EXPECT_EQ(items[4 + i].data - got.heaps[0].payload(),
                  std::ptrdiff_t(addresses[i]));
        EXPECT_EQ(items[4 + i].length, 16384u);
    }
}

TEST(recv_vectors_facts, immediate_items_arrive_in_wire_order_not_sorted)
{
    // spead2 prints heap 3's immediates sorted by value (0x1001 first); the wire has
    // 0x1000 first, and so do we.
    const decoded got = decode_capture(vector_path("spead64-40_immediate.pcap"));
    ASSERT_EQ(got.heaps.size(), 3u);
    const auto& items = got.heaps[2].items();
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].id, 0x1000u);
    EXPECT_EQ(items[0].immediate_value, 0x7be5f8f1u);
    EXPECT_EQ(items[1].id, 0x1001u);
    // right-aligned big-endian bytes, 5 wide in SPEAD-64-40
    EXPECT_EQ(std::vector<std::uint8_t>(items[0].data, items[0].data + items[0].length),
              (std::vector<std::uint8_t>{ 0x00, 0x7b, 0xe5, 0xf8, 0xf1 }));
}

TEST(recv_vectors_facts, two_substreams_stop_at_the_first_stop_heap_like_spead2)
{
    const decoded got = decode_capture(vector_path("spead64-40_two_substreams.pcap"));
    EXPECT_EQ(got.stats[recv_stat::stop_heaps], 1u);
    EXPECT_EQ(got.stats[recv_stat::packets], 15u); // the 16th datagram is never read
}
