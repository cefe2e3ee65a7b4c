/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// heap_to_stream: what spead.source makes of a received heap (docs/usage.md), without a
// flowgraph. Heaps are built as a sender would (send::heap → packetiser → assembler).

#include "mapping/block_messages.h"
#include "mapping/heap_to_stream.h"
#include "protocol/heap_assembler.h"
#include "protocol/heap_pool.h"
#include "protocol/packetiser.h"
#include <gnuradio/spead/send_heap.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

namespace {

using namespace gr::spead;

/*! Receives \p h as heap \p cnt; with \p drop_last_packet the heap arrives incomplete
 * (delivered zero-filled). */
recv::heap receive(const send::heap& h,
                   std::uint64_t cnt,
                   bool drop_last_packet = false,
                   std::size_t packet_size = 1472)
{
    send::packet_generator gen(h, cnt, packet_size);
    std::vector<std::vector<std::uint8_t>> packets;
    std::vector<std::uint8_t> header(packet_size);
    while (gen.has_next()) {
        std::vector<send::packet_piece> pieces;
        gen.next(header.data(), pieces);
        std::vector<std::uint8_t> packet;
        for (const auto& piece : pieces)
            packet.insert(packet.end(), piece.data, piece.data + piece.length);
        packets.push_back(std::move(packet));
    }
    if (drop_last_packet)
        packets.pop_back();
    recv::assembler_config config;
    config.incomplete = recv::incomplete_heaps::deliver;
    std::vector<recv::heap> out;
    recv::heap_assembler assembler(
        config, recv::detail::heap_pool::create(4), [&](recv::heap&& got) {
            out.push_back(std::move(got));
        });
    for (const auto& p : packets)
        assembler.add_packet(p.data(), p.size());
    assembler.stop(); // flushes an incomplete heap
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? recv::heap() : std::move(out.front());
}

heap_to_stream_config config_for(const std::string& type, std::size_t vlen = 1)
{
    heap_to_stream_config c;
    c.type = item_type::parse(type);
    c.vlen = vlen;
    return c;
}

/*! Tags by key (symbol name) → value, of one heap. */
std::map<std::string, pmt::pmt_t> by_key(const std::vector<gr::tag_t>& tags)
{
    std::map<std::string, pmt::pmt_t> out;
    for (const auto& t : tags)
        out[pmt::symbol_to_string(t.key)] = t.value;
    return out;
}

struct output {
    heap_to_stream::verdict verdict;
    std::vector<std::uint8_t> bytes;
    std::vector<gr::tag_t> tags;
    std::vector<pmt::pmt_t> descriptors;
};

output map(heap_to_stream& m, const recv::heap& h, std::uint64_t first_item = 0)
{
    output o;
    o.verdict = m.take(h, o.descriptors);
    if (o.verdict == heap_to_stream::verdict::output) {
        o.bytes.resize(m.items() * m.item_size());
        m.write(h, o.bytes.data(), first_item, o.tags);
    }
    return o;
}

/*! A descriptor of item \p id called \p name, its type a SPEAD \p format. */
descriptor format_descriptor(std::uint64_t id,
                             const std::string& name,
                             const std::vector<std::pair<char, std::int64_t>>& format)
{
    descriptor d;
    d.id = id;
    d.name = name;
    d.format = format;
    return d;
}

descriptor numpy_descriptor(std::uint64_t id, const std::string& name, const char* descr)
{
    descriptor d;
    d.id = id;
    d.name = name;
    d.numpy_header = make_numpy_header(descr, { 4 });
    return d;
}

// ---- descriptors that contradict item_type -----------------------------------------

TEST(HeapToStream, APayloadDescriptorThatContradictsItemTypeIsCountedOnce)
{
    heap_to_stream m(config_for("complex_int16"), nullptr);
    send::heap described{ flavour() };
    described.add_descriptor(numpy_descriptor(0x1000, "payload", "<c8"));
    descriptor timestamp;
    timestamp.id = 0x1600;
    timestamp.name = "timestamp";
    timestamp.numpy_header = make_numpy_header(">u8", {}); // a scalar: not checked
    described.add_descriptor(timestamp);
    map(m, receive(described, 1));
    map(m, receive(described, 2)); // a repeat: nothing new
    std::map<std::string, std::uint64_t> stats;
    m.add_counters(stats);
    EXPECT_EQ(stats.at("descriptors_type_mismatch"), 1u);
    m.reset();
    stats.clear();
    m.add_counters(stats);
    EXPECT_EQ(stats.at("descriptors_type_mismatch"), 0u);
}

// ---- items ---------------------------------------------------------------------------

TEST(HeapToStream, PayloadItemsBecomeItemsAndTheLengthTagCountsThem)
{
    heap_to_stream m(config_for("int16", 2), nullptr);
    std::vector<std::uint8_t> payload(16);
    for (std::size_t i = 0; i < payload.size(); i++)
        payload[i] = std::uint8_t(i);
    send::heap h;
    h.add_item(0x1000, payload.data(), payload.size(), false);
    const auto o = map(m, receive(h, 7), 100);
    ASSERT_EQ(o.verdict, heap_to_stream::verdict::output);
    EXPECT_EQ(m.item_size(), 4u);
    EXPECT_EQ(m.items(), 4u); // 16 bytes of vectors of 2 int16
    EXPECT_EQ(o.bytes, payload);
    const auto tags = by_key(o.tags);
    ASSERT_EQ(tags.size(), 2u);
    EXPECT_EQ(pmt::to_long(tags.at("packet_len")), 4);
    EXPECT_TRUE(pmt::is_integer(tags.at("packet_len"))); // GNU Radio wants a long
    EXPECT_EQ(pmt::to_uint64(tags.at("heap_cnt")), 7u);
    for (const auto& t : o.tags)
        EXPECT_EQ(t.offset, 100u);
}

TEST(HeapToStream, AnEmptyLengthTagKeyGivesNoLengthTag)
{
    auto c = config_for("int8");
    c.len_tag_key = "";
    heap_to_stream m(c, nullptr);
    std::vector<std::uint8_t> payload(8, 1);
    send::heap h;
    h.add_item(0x1000, payload.data(), payload.size(), false);
    const auto tags = by_key(map(m, receive(h, 1)).tags);
    EXPECT_EQ(tags.count("packet_len"), 0u);
    EXPECT_EQ(tags.count("heap_cnt"), 1u);
}

TEST(HeapToStream, ThePayloadItemIsChosenOrEveryAddressedItemConcatenated)
{
    std::vector<std::uint8_t> a(8, 0xaa), b(8, 0xbb);
    send::heap h;
    h.add_item(0x1000, a.data(), a.size(), false);
    h.add_item(0x1001, b.data(), b.size(), false);
    const recv::heap received = receive(h, 1);

    heap_to_stream all(config_for("int8"), nullptr);
    auto o = map(all, received);
    std::vector<std::uint8_t> both(a.size() + b.size(), 0xbb);
    std::fill(both.begin(), both.begin() + 8, 0xaa); // a, then b
    EXPECT_EQ(o.bytes, both);

    auto c = config_for("int8");
    c.payload_item = 0x1001;
    heap_to_stream one(c, nullptr);
    o = map(one, received);
    EXPECT_EQ(o.bytes, b);
}

TEST(HeapToStream, HeapsWithoutPayloadOrWithAPartialItemAreCounted)
{
    heap_to_stream m(config_for("complex_float"), nullptr);
    send::heap descriptors_only;
    descriptors_only.add_descriptor(numpy_descriptor(0x1000, "x", "<c8"));
    auto o = map(m, receive(descriptors_only, 1));
    EXPECT_EQ(o.verdict, heap_to_stream::verdict::no_payload);
    EXPECT_EQ(o.descriptors.size(), 1u); // still learnt and announced

    std::vector<std::uint8_t> payload(12); // 1.5 complex floats
    send::heap partial;
    partial.add_item(0x1000, payload.data(), payload.size(), false);
    o = map(m, receive(partial, 2));
    EXPECT_EQ(o.verdict, heap_to_stream::verdict::partial_item);
    EXPECT_EQ(m.heaps_without_payload(), 1u);
    EXPECT_EQ(m.heaps_dropped_partial_item(), 1u);
    m.reset();
    EXPECT_EQ(m.heaps_without_payload() + m.heaps_dropped_partial_item(), 0u);
}

// ---- tags ----------------------------------------------------------------------------

TEST(HeapToStream, ImmediatesAreTaggedByHexIdUntilADescriptorNamesThem)
{
    heap_to_stream m(config_for("int8"), nullptr);
    std::vector<std::uint8_t> payload(8, 3);
    send::heap h;
    h.add_immediate(0x1600, 123456);
    h.add_item(0x1000, payload.data(), payload.size(), false);
    auto tags = by_key(map(m, receive(h, 1)).tags);
    EXPECT_EQ(pmt::to_uint64(tags.at("0x1600")), 123456u);

    const descriptor d = format_descriptor(0x1600, "timestamp", { { 'u', 48 } });
    send::heap named;
    named.add_descriptor(d);
    named.add_immediate(0x1600, 42);
    named.add_item(0x1000, payload.data(), payload.size(), false);
    const auto o = map(m, receive(named, 2));
    ASSERT_EQ(o.descriptors.size(), 1u);
    EXPECT_EQ(descriptor_from_pmt(o.descriptors[0]), d);
    tags = by_key(o.tags);
    EXPECT_EQ(tags.count("0x1600"), 0u);
    EXPECT_EQ(pmt::to_uint64(tags.at("timestamp")), 42u);

    // The same descriptor again is nothing new.
    EXPECT_TRUE(map(m, receive(named, 3)).descriptors.empty());
}

TEST(HeapToStream, AnIncompleteHeapIsTaggedWithTheBytesThatArrived)
{
    heap_to_stream m(config_for("int8"), nullptr);
    std::vector<std::uint8_t> payload(4000, 9);
    send::heap h;
    h.add_item(0x1000, payload.data(), payload.size(), false);
    const recv::heap received = receive(h, 5, true, 1472);
    ASSERT_FALSE(received.is_complete());
    const auto o = map(m, received);
    ASSERT_EQ(o.verdict, heap_to_stream::verdict::output);
    EXPECT_EQ(m.items(), 4000u); // zero-filled to the heap's size
    const auto tags = by_key(o.tags);
    EXPECT_EQ(pmt::to_uint64(tags.at("heap_incomplete")), received.received_bytes());
    EXPECT_LT(received.received_bytes(), 4000u);
}

recv::heap heap_with_timestamp(std::uint64_t timestamp)
{
    static std::vector<std::uint8_t> payload(8, 1);
    send::heap h;
    h.add_immediate(0x1600, timestamp);
    h.add_item(0x1000, payload.data(), payload.size(), false);
    return receive(h, 1);
}

std::pair<std::uint64_t, double> rx_time_tag(heap_to_stream& m, const recv::heap& h)
{
    const auto tags = by_key(map(m, h).tags);
    const pmt::pmt_t t = tags.at("rx_time");
    return { pmt::to_uint64(pmt::tuple_ref(t, 0)), pmt::to_double(pmt::tuple_ref(t, 1)) };
}

TEST(HeapToStream, RxTimeIsTheTimestampOverTheRatePlusTheSyncTime)
{
    auto c = config_for("int8");
    c.timestamp_item = 0x1600;
    c.sample_rate = 1e6;
    c.sync_time = 1700000000.25;
    heap_to_stream m(c, nullptr);
    auto [secs, frac] = rx_time_tag(m, heap_with_timestamp(2500000)); // 2.5 s
    EXPECT_EQ(secs, 1700000002u);
    EXPECT_DOUBLE_EQ(frac, 0.75);
    // 0.8 s + 0.25 s: the fraction carries into the seconds.
    std::tie(secs, frac) = rx_time_tag(m, heap_with_timestamp(2800000));
    EXPECT_EQ(secs, 1700000003u);
    EXPECT_NEAR(frac, 0.05, 1e-12);
}

TEST(HeapToStream, RxTimeOfLargeCountersAndNonIntegerRatesKeepsPrecision)
{
    auto c = config_for("int8");
    c.timestamp_item = 0x1600;
    c.sample_rate = 1712e6; // an integer rate splits exactly
    heap_to_stream m(c, nullptr);
    // 40-bit immediates: the largest counter SPEAD-64-40 carries.
    const std::uint64_t big = (std::uint64_t(1) << 40) - 1;
    auto [secs, frac] = rx_time_tag(m, heap_with_timestamp(big));
    EXPECT_EQ(secs, big / 1712000000u);
    EXPECT_NEAR(frac, double(big % 1712000000u) / 1712e6, 1e-15);
    // Near 2^63 samples, straight from the mapper.
    const pmt::pmt_t t = m.rx_time(std::uint64_t(1) << 63);
    EXPECT_EQ(pmt::to_uint64(pmt::tuple_ref(t, 0)),
              (std::uint64_t(1) << 63) / 1712000000u);

    c.sample_rate = 2.5; // not an integer: long double arithmetic
    heap_to_stream odd(c, nullptr);
    const pmt::pmt_t u = odd.rx_time(7);
    EXPECT_EQ(pmt::to_uint64(pmt::tuple_ref(u, 0)), 2u);
    EXPECT_NEAR(pmt::to_double(pmt::tuple_ref(u, 1)), 0.8, 1e-12);
}

// ---- byte order
// ------------------------------------------------------------------------

std::vector<std::uint8_t> bytes_of(const std::vector<int>& values)
{
    return std::vector<std::uint8_t>(values.begin(), values.end());
}

TEST(HeapToStream, AutoByteOrderSwapsWhatANumpyHeaderSaysIsBigEndian)
{
    heap_to_stream m(config_for("int16"), nullptr);
    const auto payload = bytes_of({ 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 });
    send::heap h;
    h.add_descriptor(numpy_descriptor(0x1000, "samples", ">i2"));
    h.add_item(0x1000, payload.data(), payload.size(), false);
    EXPECT_EQ(map(m, receive(h, 1)).bytes,
              bytes_of({ 0x02, 0x01, 0x04, 0x03, 0x06, 0x05, 0x08, 0x07 }));

    heap_to_stream little(config_for("int16"), nullptr);
    send::heap l;
    l.add_descriptor(numpy_descriptor(0x1000, "samples", "<i2"));
    l.add_item(0x1000, payload.data(), payload.size(), false);
    EXPECT_EQ(map(little, receive(l, 1)).bytes, payload); // already host order

    // Complex: each real component is swapped.
    heap_to_stream complex(config_for("complex_float"), nullptr);
    send::heap c;
    c.add_descriptor(numpy_descriptor(0x1000, "samples", ">c8"));
    c.add_item(0x1000, payload.data(), payload.size(), false);
    EXPECT_EQ(map(complex, receive(c, 1)).bytes,
              bytes_of({ 0x04, 0x03, 0x02, 0x01, 0x08, 0x07, 0x06, 0x05 }));
}

TEST(HeapToStream, AutoByteOrderSwapsUniformSpeadFormatFieldsWhichAreBigEndian)
{
    heap_to_stream m(config_for("int32"), nullptr);
    const auto payload = bytes_of({ 0x01, 0x02, 0x03, 0x04 });
    send::heap h;
    h.add_descriptor(format_descriptor(0x1000, "word", { { 'i', 32 } }));
    h.add_item(0x1000, payload.data(), payload.size(), false);
    EXPECT_EQ(map(m, receive(h, 1)).bytes, bytes_of({ 0x04, 0x03, 0x02, 0x01 }));

    // A mixed record is left as it is.
    heap_to_stream mixed(config_for("int32"), nullptr);
    send::heap x;
    x.add_descriptor(
        format_descriptor(0x1000, "word", { { 'i', 16 }, { 'u', 8 }, { 'u', 8 } }));
    x.add_item(0x1000, payload.data(), payload.size(), false);
    EXPECT_EQ(map(mixed, receive(x, 1)).bytes, payload);
}

TEST(HeapToStream, AsIsAndSwapIgnoreDescriptors)
{
    const auto payload = bytes_of({ 0x01, 0x02, 0x03, 0x04 });
    send::heap h;
    h.add_descriptor(numpy_descriptor(0x1000, "samples", ">i2"));
    h.add_item(0x1000, payload.data(), payload.size(), false);
    const recv::heap received = receive(h, 1);

    auto c = config_for("int16");
    c.byte_order = byte_order_mode::as_is;
    heap_to_stream as_is(c, nullptr);
    EXPECT_EQ(map(as_is, received).bytes, payload);
    c.byte_order = byte_order_mode::swap;
    heap_to_stream swap(c, nullptr);
    EXPECT_EQ(map(swap, received).bytes, bytes_of({ 0x02, 0x01, 0x04, 0x03 }));
}

// ---- heaps port
// ------------------------------------------------------------------------

TEST(HeapToStream, ThePduCarriesMetadataAndThePayloadAsReceived)
{
    auto c = config_for("int16");
    c.payload_item = 0x1000;
    heap_to_stream m(c, nullptr);
    const auto payload = bytes_of({ 1, 2, 3, 4 });
    const auto other = bytes_of({ 9, 9, 9, 9, 9, 9, 9, 9, 9 });
    send::heap h;
    h.add_descriptor(numpy_descriptor(0x1000, "samples", ">i2"));
    h.add_immediate(0x1600, 77);
    h.add_item(0x1000, payload.data(), payload.size(), false);
    h.add_item(0x1001, other.data(), other.size(), false);
    const recv::heap received = receive(h, 11);
    std::vector<pmt::pmt_t> descriptors;
    ASSERT_EQ(m.take(received, descriptors), heap_to_stream::verdict::output);
    const pmt::pmt_t pdu = m.pdu(received);
    const pmt::pmt_t meta = pmt::car(pdu);
    EXPECT_EQ(pmt::to_uint64(pmt::dict_ref(meta, pmt::mp("heap_cnt"), pmt::PMT_NIL)),
              11u);
    EXPECT_EQ(pmt::to_uint64(pmt::dict_ref(meta, pmt::mp("0x1600"), pmt::PMT_NIL)), 77u);
    EXPECT_EQ(
        pmt::u8vector_elements(pmt::dict_ref(meta, pmt::mp("0x1001"), pmt::PMT_NIL)),
        other);
    EXPECT_EQ(pmt::u8vector_elements(pmt::cdr(pdu)), payload); // not byte-swapped
}

} // namespace

namespace {

/*! A descriptor message as a user builds it by hand: format and shape as given. */
pmt::pmt_t descriptor_message(const pmt::pmt_t& format, const pmt::pmt_t& shape)
{
    pmt::pmt_t dict = pmt::make_dict();
    dict = pmt::dict_add(dict, pmt::mp("id"), pmt::from_long(0x1600));
    dict = pmt::dict_add(dict, pmt::mp("name"), pmt::mp("timestamp"));
    dict = pmt::dict_add(dict, pmt::mp("format"), format);
    return pmt::dict_add(dict, pmt::mp("shape"), shape);
}

} // namespace

TEST(DescriptorMessages, FormatAndShapeMayBeVectorsListsOrTuples)
{
    // A list used to give an empty format, silently.
    const pmt::pmt_t u48 = pmt::cons(pmt::mp("u"), pmt::from_long(48));
    const pmt::pmt_t f8 = pmt::cons(pmt::mp("f"), pmt::from_long(8));
    const std::vector<std::pair<char, std::int64_t>> format = { { 'u', 48 }, { 'f', 8 } };
    const std::vector<std::int64_t> shape = { 2, 3 };
    const pmt::pmt_t two = pmt::from_long(2), three = pmt::from_long(3);
    const pmt::pmt_t vector_format = pmt::make_vector(2, u48);
    pmt::vector_set(vector_format, 1, f8);
    const pmt::pmt_t vector_shape = pmt::make_vector(2, two);
    pmt::vector_set(vector_shape, 1, three);
    for (const auto& [f, s] : std::vector<std::pair<pmt::pmt_t, pmt::pmt_t>>{
             { vector_format, vector_shape },
             { pmt::list2(u48, f8), pmt::list2(two, three) },
             { pmt::make_tuple(u48, f8), pmt::make_tuple(two, three) },
             { pmt::list2(u48, f8), pmt::init_s64vector(2, shape) } }) {
        const descriptor d = descriptor_from_pmt(descriptor_message(f, s));
        EXPECT_EQ(d.format, format) << pmt::write_string(f);
        EXPECT_EQ(d.shape, shape) << pmt::write_string(s);
    }
    // One (code, bits) pair alone is a format of one field; an empty list none.
    EXPECT_EQ(descriptor_from_pmt(descriptor_message(u48, pmt::PMT_NIL)).format,
              (std::vector<std::pair<char, std::int64_t>>{ { 'u', 48 } }));
    EXPECT_TRUE(descriptor_from_pmt(descriptor_message(pmt::PMT_NIL, pmt::PMT_NIL))
                    .format.empty());
}

TEST(DescriptorMessages, AFormatOfAnotherKindIsRefusedSayingWhatItShouldBe)
{
    for (const pmt::pmt_t& bad : { pmt::mp("u48"), pmt::from_long(48) }) {
        try {
            descriptor_from_pmt(descriptor_message(bad, pmt::PMT_NIL));
            ADD_FAILURE() << pmt::write_string(bad) << " accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind(
                          "descriptor message: 'format' must be a vector or list of "
                          "(code, bits) pairs",
                          0),
                      0u)
                << e.what();
        }
    }
}
