/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// stream_to_heap: what spead.sink makes of a tagged stream (docs/usage.md), without a
// flowgraph: framing, tags → cnt and immediates, descriptors, counters.

#include "mapping/stream_to_heap.h"
#include <gnuradio/spead/item_ids.h>
#include <gtest/gtest.h>
#include <map>
#include <vector>

namespace {

using namespace gr::spead;

gr::tag_t tag(std::uint64_t offset, const std::string& key, const pmt::pmt_t& value)
{
    gr::tag_t t;
    t.offset = offset;
    t.key = pmt::mp(key);
    t.value = value;
    return t;
}

stream_to_heap_config config(const std::string& type = "int16")
{
    stream_to_heap_config c;
    c.type = item_type::parse(type);
    return c;
}

/*! The items of a built heap: id → (inline value, or bytes). */
struct built {
    std::map<std::uint64_t, std::uint64_t> immediates;
    std::map<std::uint64_t, std::vector<std::uint8_t>> addressed;
    std::vector<descriptor> descriptors;
    std::vector<std::uint64_t> stream_ctrl;
};

built contents(const send::heap& h)
{
    built out;
    for (const auto& it : h.items()) {
        if (it.id == item_id::stream_ctrl)
            out.stream_ctrl.push_back(it.inline_value);
        else if (it.id == item_id::descriptor)
            out.descriptors.push_back(*decode_descriptor(it.data, it.length));
        else if (it.is_inline)
            out.immediates[it.id] = it.inline_value;
        else
            out.addressed[it.id] =
                std::vector<std::uint8_t>(it.data, it.data + it.length);
    }
    return out;
}

// ---- framing
// ---------------------------------------------------------------------------

TEST(StreamToHeap, ALengthTagFramesAPacketThatWaitsUntilItIsAllThere)
{
    stream_to_heap m(config(), nullptr);
    const std::vector<gr::tag_t> tags = { tag(100, "packet_len", pmt::from_long(8)),
                                          tag(103, "0x1600", pmt::from_long(5)),
                                          tag(108, "packet_len", pmt::from_long(4)) };
    auto a = m.frame(tags, 0, 100, 6, 1000);
    EXPECT_EQ(a.what, stream_to_heap::action::wait);
    EXPECT_EQ(m.items_needed(), 8u);
    a = m.frame(tags, 0, 100, 12, 1000);
    EXPECT_EQ(a.what, stream_to_heap::action::send);
    EXPECT_EQ(a.items, 8u);
    EXPECT_EQ(a.end_tag, 2u); // the packet's tags: [0, 2)
    a = m.frame(tags, 2, 108, 4, 1000);
    EXPECT_EQ(a.what, stream_to_heap::action::send);
    EXPECT_EQ(a.items, 4u);
}

TEST(StreamToHeap, ItemsOutsideAnyPacketAreDroppedUpToTheNextLengthTagAndCounted)
{
    stream_to_heap m(config(), nullptr);
    const std::vector<gr::tag_t> tags = { tag(10, "packet_len", pmt::from_long(4)) };
    auto a = m.frame(tags, 0, 3, 20, 1000);
    EXPECT_EQ(a.what, stream_to_heap::action::drop);
    EXPECT_EQ(a.items, 7u);
    a = m.frame({}, 0, 14, 6, 1000); // no length tag at all: everything
    EXPECT_EQ(a.what, stream_to_heap::action::drop);
    EXPECT_EQ(a.items, 6u);
    EXPECT_EQ(m.counters().at("items_dropped_untagged"), 13u);
}

TEST(StreamToHeap, APacketLongerThanTheUpstreamBufferIsTakenInParts)
{
    stream_to_heap m(config(), nullptr);
    const std::vector<gr::tag_t> tags = { tag(0, "packet_len", pmt::from_long(50)),
                                          tag(30, "0x1600", pmt::from_long(1)),
                                          tag(50, "packet_len", pmt::from_long(4)) };
    auto a = m.frame(tags, 0, 0, 20, 40); // the buffer holds 40
    EXPECT_EQ(a.what, stream_to_heap::action::begin);
    EXPECT_EQ(a.items, 20u);
    EXPECT_EQ(a.end_tag, 1u);
    EXPECT_TRUE(m.gathering());
    EXPECT_EQ(m.items_needed(), 1u);   // whatever comes: the scheduler need not wait
    a = m.frame(tags, 1, 20, 100, 40); // the rest of it, and its tag at 30
    EXPECT_EQ(a.what, stream_to_heap::action::more);
    EXPECT_EQ(a.items, 30u);
    EXPECT_EQ(a.end_tag, 2u);
    EXPECT_FALSE(m.gathering());
    a = m.frame(tags, 2, 50, 50, 40); // the next packet, framed as usual
    EXPECT_EQ(a.what, stream_to_heap::action::send);
    EXPECT_EQ(a.items, 4u);
    EXPECT_EQ(m.counters().at("packets_dropped_too_large"), 0u);
    EXPECT_EQ(m.counters().at("items_dropped_untagged"), 0u);
}

TEST(StreamToHeap, APacketNoHeapCanAddressIsSkippedWholeAndCounted)
{
    auto c = config(); // int16: 2 bytes an item
    c.flavour = flavour(16);
    stream_to_heap m(c, nullptr);
    const std::vector<gr::tag_t> tags = { tag(0, "packet_len", pmt::from_long(40000)) };
    auto a = m.frame(tags, 0, 0, 20, 1 << 20); // 80000 bytes > 2^16 - 1
    EXPECT_EQ(a.what, stream_to_heap::action::drop);
    EXPECT_EQ(a.items, 20u);
    a = m.frame({}, 0, 20, 1 << 20, 1 << 20); // the rest of it, whatever comes next
    EXPECT_EQ(a.what, stream_to_heap::action::drop);
    EXPECT_EQ(a.items, 40000u - 20u);
    EXPECT_EQ(m.counters().at("packets_dropped_too_large"), 1u);
    EXPECT_EQ(m.counters().at("items_dropped_untagged"), 0u);
}

TEST(StreamToHeap, WithoutALengthTagKeyEveryHeapItemsItemsAreAHeap)
{
    auto c = config();
    c.len_tag_key = "";
    c.heap_items = 16;
    stream_to_heap m(c, nullptr);
    EXPECT_EQ(m.items_needed(), 16u);
    auto a = m.frame({}, 0, 0, 10, 1000);
    EXPECT_EQ(a.what, stream_to_heap::action::wait);
    a = m.frame({}, 0, 0, 40, 1000);
    EXPECT_EQ(a.what, stream_to_heap::action::send);
    EXPECT_EQ(a.items, 16u);
}

// ---- tags → heap
// -----------------------------------------------------------------------

TEST(StreamToHeap, HeapCntComesFromATagOrTheSequence)
{
    auto c = config();
    c.cnt_start = 10;
    c.cnt_step = 3;
    stream_to_heap m(c, nullptr);
    std::vector<std::uint8_t> payload(8);
    std::uint64_t cnt = 0;
    send::heap a;
    m.read_tags({}, 0, 0);
    ASSERT_TRUE(m.build_data_heap(a, payload.data(), 4, cnt));
    EXPECT_EQ(cnt, 10u);
    const std::vector<gr::tag_t> tags = { tag(0, "heap_cnt", pmt::from_uint64(77)) };
    send::heap b;
    m.read_tags(tags, 0, 1);
    ASSERT_TRUE(m.build_data_heap(b, payload.data(), 4, cnt));
    EXPECT_EQ(cnt, 77u);
    send::heap c2;
    m.read_tags({}, 0, 0);
    ASSERT_TRUE(m.build_data_heap(c2, payload.data(), 4, cnt));
    EXPECT_EQ(cnt, 13u); // the sequence goes on where it was
}

TEST(StreamToHeap, HexKeysAndLearntNamesBecomeImmediates)
{
    stream_to_heap m(config(), nullptr);
    descriptor d;
    d.id = 0x1600;
    d.name = "timestamp";
    d.format = { { 'u', 48 } };
    m.learn_descriptor(d);
    const std::vector<gr::tag_t> tags = {
        tag(0, "packet_len", pmt::from_long(4)), // framing, not an item
        tag(0, "timestamp", pmt::from_uint64(1234)),
        tag(1, "0x1700", pmt::from_long(9)),
        tag(2, "rx_time", pmt::make_tuple(pmt::from_uint64(1), pmt::from_double(0.5))),
        tag(2, "heap_incomplete", pmt::from_uint64(3)),
        tag(3, "payload", pmt::from_long(1)), // the payload's own name: not an immediate
        tag(3, "0x03", pmt::from_long(1)),    // reserved
        tag(3, "unknown_name", pmt::from_long(1)),
    };
    int asked = 0;
    m.read_tags(tags, 0, tags.size(), [&] { asked++; });
    EXPECT_EQ(asked, 1); // for unknown_name
    std::vector<std::uint8_t> payload = { 1, 2, 3, 4, 5, 6, 7, 8 };
    send::heap h;
    std::uint64_t cnt;
    ASSERT_TRUE(m.build_data_heap(h, payload.data(), 4, cnt));
    const built b = contents(h);
    EXPECT_EQ(
        b.immediates,
        (std::map<std::uint64_t, std::uint64_t>{ { 0x1600, 1234 }, { 0x1700, 9 } }));
    EXPECT_EQ(b.addressed.at(0x1000), payload);
    EXPECT_EQ(m.counters().at("tags_too_wide"), 0u);
}

TEST(StreamToHeap, ValuesWiderThanTheFlavourAreCountedNotSent)
{
    const std::vector<gr::tag_t> tags = { tag(
        0, "0x1600", pmt::from_uint64(std::uint64_t(1) << 45)) };
    std::vector<std::uint8_t> payload(8);
    std::uint64_t cnt;

    stream_to_heap narrow(config(), nullptr); // 64-40
    narrow.read_tags(tags, 0, 1);
    send::heap h;
    ASSERT_TRUE(narrow.build_data_heap(h, payload.data(), 4, cnt));
    EXPECT_TRUE(contents(h).immediates.empty());
    EXPECT_EQ(narrow.counters().at("tags_too_wide"), 1u);

    auto c = config();
    c.flavour = flavour(48);
    stream_to_heap wide(c, nullptr);
    wide.read_tags(tags, 0, 1);
    send::heap w(c.flavour);
    ASSERT_TRUE(wide.build_data_heap(w, payload.data(), 4, cnt));
    EXPECT_EQ(contents(w).immediates.at(0x1600), std::uint64_t(1) << 45);
    EXPECT_EQ(wide.counters().at("tags_too_wide"), 0u);
}

TEST(StreamToHeap, ACntBeyondTheFlavourIsRejectedAndCounted)
{
    stream_to_heap m(config(), nullptr);
    const std::vector<gr::tag_t> tags = { tag(
        0, "heap_cnt", pmt::from_uint64(std::uint64_t(1) << 41)) };
    m.read_tags(tags, 0, 1);
    std::vector<std::uint8_t> payload(8);
    send::heap h;
    std::uint64_t cnt;
    EXPECT_FALSE(m.build_data_heap(h, payload.data(), 4, cnt));
    EXPECT_EQ(m.counters().at("heaps_rejected"), 1u);
}

// ---- descriptors
// -----------------------------------------------------------------------

TEST(StreamToHeap, DescriptorsGoOutAtStartOnChangeAndEveryInterval)
{
    auto c = config("complex_int16");
    c.descriptor_interval = 2;
    c.payload_name = "samples";
    stream_to_heap m(c, nullptr);

    EXPECT_TRUE(m.descriptors_due(100)); // start of the run
    send::heap first;
    m.build_control_heap(first, true, false);
    built b = contents(first);
    EXPECT_EQ(b.stream_ctrl, std::vector<std::uint64_t>{ stream_ctrl::start });
    ASSERT_EQ(b.descriptors.size(), 1u);
    EXPECT_EQ(b.descriptors[0].name, "samples");
    EXPECT_EQ(b.descriptors[0].id, 0x1000u);
    const auto dtype = parse_numpy_header(b.descriptors[0].numpy_header);
    ASSERT_TRUE(dtype);
    EXPECT_EQ(dtype->descr, host_is_big_endian() ? ">i2" : "<i2");
    EXPECT_EQ(dtype->shape, (std::vector<std::int64_t>{ 100, 2 })); // pairs of int16
    EXPECT_TRUE(m.run_started());

    m.data_heap_sent();
    EXPECT_FALSE(m.descriptors_due(100));
    m.data_heap_sent();
    EXPECT_TRUE(m.descriptors_due(100)); // every 2 heaps
    send::heap again;
    m.build_control_heap(again, true, false);
    EXPECT_TRUE(contents(again).stream_ctrl.empty()); // no second start
    EXPECT_FALSE(m.descriptors_due(100));
    EXPECT_TRUE(m.descriptors_due(50)); // the payload's shape changed

    descriptor d;
    d.id = 0x1600;
    d.name = "timestamp";
    send::heap shape;
    m.build_control_heap(shape, true, false);
    m.learn_descriptor(d);
    EXPECT_TRUE(m.descriptors_due(50)); // a new descriptor from the port
    send::heap both;
    m.build_control_heap(both, true, true);
    b = contents(both);
    EXPECT_EQ(b.descriptors.size(), 2u);
    EXPECT_EQ(b.stream_ctrl, std::vector<std::uint64_t>{ stream_ctrl::stop });
}

TEST(StreamToHeap, ControlCntsCountDownFromTheFlavoursLargestAndResetRestarts)
{
    stream_to_heap m(config(), nullptr);
    const std::uint64_t top = flavour(40).max_address();
    EXPECT_EQ(m.next_control_cnt(), top);
    EXPECT_EQ(m.next_control_cnt(), top - 1);
    m.data_heap_sent();
    m.control_heap_sent();
    m.reset();
    EXPECT_EQ(m.next_control_cnt(), top);
    EXPECT_EQ(m.counters().at("data_heaps"), 0u);
    EXPECT_EQ(m.counters().at("control_heaps"), 0u);
    EXPECT_FALSE(m.run_started());
}

TEST(StreamToHeap, SwapByteOrderSwapsEachComponent)
{
    auto c = config("complex_int16");
    c.byte_order = byte_order_mode::swap;
    stream_to_heap m(c, nullptr);
    const std::vector<std::uint8_t> in = { 1, 2, 3, 4, 5, 6, 7, 8 };
    std::vector<std::uint8_t> out(8);
    m.copy_payload(out.data(), in.data(), 2);
    EXPECT_EQ(out, (std::vector<std::uint8_t>{ 2, 1, 4, 3, 6, 5, 8, 7 }));
}

} // namespace
