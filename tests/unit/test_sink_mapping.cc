/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// sink_mapping::send(): what spead.sink sends for its input in each input mode
// (stream_to_heap, stream_to_chunk), through send_slots, without a flowgraph: the
// heaps on the wire (recorded by a writer that decodes them), what is consumed.

#include "mapping/stream_to_chunk.h"
#include "mapping/stream_to_heap.h"
#include "protocol/packet_decoder.h"
#include "protocol/packet_writer.h"
#include <condition_variable>
#include <gtest/gtest.h>
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace {

using namespace gr::spead;
using bytes = std::vector<std::uint8_t>;

/*! One packet on the wire, decoded. */
struct sent {
    std::size_t substream;
    std::uint64_t cnt;
    std::map<std::uint64_t, std::uint64_t> immediates;
    std::uint64_t payload_length;
    bytes payload;
};

/*! Holds a writer's data heaps back until it is opened. */
class gate
{
public:
    void open()
    {
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            d_open = true;
        }
        d_opened.notify_all();
    }
    void pass()
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        d_opened.wait(lock, [this] { return d_open; });
    }

private:
    std::mutex d_mutex;
    std::condition_variable d_opened;
    bool d_open = false;
};

/*! Whether a heap cnt is a data heap's (control heaps count down from the largest). */
bool is_data_cnt(std::uint64_t cnt) { return cnt < (std::uint64_t(1) << 32); }

/*! A transport that decodes every packet it is given (a data heap's only once \p g,
 * when given, is open). */
class recording_writer : public send::packet_writer
{
public:
    recording_writer(std::vector<sent>& out, gate* g) : d_out(out), d_gate(g) {}
    std::size_t write_packets(const send::packet* packets,
                              std::size_t n,
                              boost::system::error_code&) override
    {
        for (std::size_t i = 0; i < n; i++) {
            bytes wire;
            for (std::size_t p = 0; p < packets[i].n_pieces; p++)
                wire.insert(wire.end(),
                            packets[i].pieces[p].data,
                            packets[i].pieces[p].data + packets[i].pieces[p].length);
            packet_header h;
            EXPECT_EQ(decode_packet(wire.data(), wire.size(), h), decode_result::ok);
            sent s{ packets[i].substream,
                    h.heap_cnt,
                    {},
                    h.payload_length,
                    bytes(h.payload, h.payload + h.payload_length) };
            if (d_gate && is_data_cnt(h.heap_cnt)) {
                d_gate->pass();
                s.payload.assign(h.payload, h.payload + h.payload_length); // read now
            }
            const std::uint64_t mask = (std::uint64_t(1) << h.heap_address_bits) - 1;
            for (std::uint32_t k = 0; k < h.n_pointers; k++) {
                std::uint64_t v = 0;
                for (int b = 0; b < 8; b++)
                    v = (v << 8) | h.pointers[8 * k + b];
                const std::uint64_t id = (v >> h.heap_address_bits) & 0x7fffff;
                if ((v >> 63) && id > 0x04)
                    s.immediates[id] = v & mask;
            }
            std::lock_guard<std::mutex> lock(d_mutex);
            d_out.push_back(s);
        }
        return n;
    }

private:
    std::mutex d_mutex;
    std::vector<sent>& d_out;
    gate* d_gate;
};

/*! send_slots over a recording writer with \p substreams destinations. */
struct wire {
    explicit wire(std::size_t substreams = 1, gate* g = nullptr) : slots(8, nullptr)
    {
        slots.open(std::make_unique<send::stream>(
            slots.io(),
            send::stream_config().set_inline_completions(true),
            substreams,
            std::make_unique<recording_writer>(out, g)));
    }
    /*! Sends what is queued and closes the stream. */
    const std::vector<sent>& packets()
    {
        slots.close();
        return out;
    }
    /*! Only the data heaps (control heaps count down from the largest cnt). */
    std::vector<sent> data()
    {
        std::vector<sent> d;
        for (const sent& s : packets())
            if (is_data_cnt(s.cnt))
                d.push_back(s);
        return d;
    }
    std::vector<sent> out;
    send_slots slots;
};

/*! The block's input: \p inputs buffers of int16 items and their tags (in points
 * into them: never copied). */
struct input {
    input(const input&) = delete;
    input& operator=(const input&) = delete;
    input(std::size_t inputs, std::size_t items)
        : data(inputs, bytes(2 * items)), available(int(inputs), int(items)), tags(inputs)
    {
        for (auto& d : data)
            pointers.push_back(d.data());
        in.items = &pointers;
        in.available = &available;
        in.capacity = 1 << 20;
        in.tags = [this](std::size_t i,
                         std::uint64_t from,
                         std::uint64_t to,
                         const pmt::pmt_t& key,
                         std::vector<gr::tag_t>& out) {
            for (const gr::tag_t& t : tags[i])
                if (t.offset >= from && t.offset < to &&
                    (pmt::is_null(key) || pmt::eqv(key, t.key)))
                    out.push_back(t);
        };
    }
    /*! The block consumed \p n items: the next call starts after them. */
    void consume(std::size_t n)
    {
        for (std::size_t i = 0; i < pointers.size(); i++) {
            pointers[i] = static_cast<const std::uint8_t*>(pointers[i]) + 2 * n;
            available[i] -= int(n);
        }
        in.first += n;
    }
    void tag(std::size_t i, std::uint64_t offset, const char* key, const pmt::pmt_t& v)
    {
        gr::tag_t t;
        t.offset = offset;
        t.key = pmt::mp(key);
        t.value = v;
        tags[i].push_back(t);
    }
    std::vector<bytes> data;
    gr_vector_const_void_star pointers;
    gr_vector_int available;
    std::vector<std::vector<gr::tag_t>> tags;
    sink_input in;
};

/*! Calls \p m.send() as spead.sink's scheduler would: again on what is left after
 * each call that consumed items, until one consumes none. A heap sent in place is
 * consumed only once sent, maybe by a later call. \return the items consumed. */
std::size_t send_all(sink_mapping& m, input& x, wire& w)
{
    std::size_t total = 0;
    while (const std::size_t n = m.send(x.in, w.slots)) {
        total += n;
        x.consume(n);
    }
    return total;
}

stream_to_heap_config int16_packets()
{
    stream_to_heap_config c;
    c.type = item_type::parse("int16");
    return c;
}

stream_to_chunk_config int16_series(std::size_t substreams)
{
    stream_to_chunk_config c;
    c.type = item_type::parse("int16");
    c.item_bytes = 2;
    c.heap_items = 4;
    c.timestamp_item = 0x1600;
    c.timestamp_step = 4;
    c.substreams = substreams;
    c.substream_item = substreams > 1 ? 0x1601 : 0;
    c.sample_rate = 1000;
    return c;
}

// ---- heaps ---------------------------------------------------------------------------

TEST(SinkMapping, HeapsSendOneHeapPerTaggedPacketAfterTheDescriptors)
{
    wire w;
    stream_to_heap m(int16_packets(), nullptr);
    input x(1, 10);
    x.tag(0, 0, "packet_len", pmt::from_long(4));
    x.tag(0, 4, "packet_len", pmt::from_long(6));
    x.tag(0, 4, "0x1600", pmt::from_long(77));
    EXPECT_EQ(send_all(m, x, w), 10u);
    const auto all = w.packets();
    ASSERT_EQ(all.size(), 4u);
    EXPECT_EQ(all[0].immediates.count(0x06), 1u); // STREAM_CTRL start, descriptors
    EXPECT_EQ(all[1].cnt, 1u);
    EXPECT_EQ(all[1].payload_length, 8u);
    // The payload's shape changed (6 items, not 4): its descriptor goes out again.
    EXPECT_EQ(all[2].cnt, (std::uint64_t(1) << 40) - 2);
    EXPECT_EQ(all[3].cnt, 2u);
    EXPECT_EQ(all[3].payload_length, 12u);
    EXPECT_EQ(all[3].immediates.at(0x1600), 77u);
    EXPECT_EQ(m.counters().at("data_heaps"), 2u);
    EXPECT_EQ(m.counters().at("control_heaps"), 2u);
}

TEST(SinkMapping, HeapsConsumeNothingOfAPacketNotAllThere)
{
    wire w;
    stream_to_heap m(int16_packets(), nullptr);
    input x(1, 6);
    x.tag(0, 0, "packet_len", pmt::from_long(2));
    x.tag(0, 2, "packet_len", pmt::from_long(8));
    EXPECT_EQ(m.send(x.in, w.slots), 2u);
    EXPECT_EQ(m.items_needed(), 8u);
    EXPECT_EQ(w.data().size(), 1u);
}

TEST(SinkMapping, HeapsTakeAPacketLongerThanTheUpstreamBufferInPartsAsOneHeap)
{
    wire w;
    stream_to_heap m(int16_packets(), nullptr);
    input x(1, 30);
    x.in.capacity = 16; // the upstream buffer holds 16 items: the packet has 24
    for (std::size_t i = 0; i < 30; i++)
        x.data[0][2 * i] = std::uint8_t(i);
    x.tag(0, 0, "packet_len", pmt::from_long(24));
    x.tag(0, 20, "0x1600", pmt::from_long(9)); // a tag in the second part
    x.tag(0, 24, "packet_len", pmt::from_long(6));
    x.available[0] = 16;
    EXPECT_EQ(m.send(x.in, w.slots), 16u);        // copied: consumed at once
    EXPECT_EQ(m.counters().at("data_heaps"), 0u); // not all there yet
    // The scheduler hands over the rest where the consumed items were.
    x.consume(16);
    x.available[0] = 14;
    EXPECT_EQ(send_all(m, x, w), 14u);
    const auto heaps = w.data();
    ASSERT_EQ(heaps.size(), 2u);
    EXPECT_EQ(heaps[0].payload_length, 48u);
    EXPECT_EQ(heaps[0].payload, bytes(x.data[0].begin(), x.data[0].begin() + 48));
    EXPECT_EQ(heaps[0].immediates.at(0x1600), 9u);
    EXPECT_EQ(heaps[1].payload_length, 12u);
    EXPECT_EQ(m.counters().at("data_heaps"), 2u);
}

// ---- in place or copied ---------------------------------------------------------------

/*! Three tagged packets of 4 int16 items, each byte its own (sent whole, they show). */
struct three_packets : input {
    three_packets() : input(1, 12)
    {
        for (std::size_t b = 0; b < data[0].size(); b++)
            data[0][b] = std::uint8_t(b + 1);
        for (std::uint64_t p = 0; p < 3; p++)
            tag(0, 4 * p, "packet_len", pmt::from_long(4));
    }
};

/*! The payloads \p w sent, in order, once it is closed. */
std::vector<bytes> payloads(wire& w)
{
    std::vector<bytes> out;
    for (const sent& s : w.data())
        out.push_back(s.payload);
    return out;
}

/*! \p w, once closed, sent three_packets() as they were before anything overwrote
 * them (\p original). */
void expect_sent_as(wire& w, const bytes& original)
{
    const auto sent = payloads(w);
    ASSERT_EQ(sent.size(), 3u);
    for (std::size_t p = 0; p < 3; p++)
        EXPECT_EQ(sent[p],
                  bytes(original.begin() + 8 * p, original.begin() + 8 * (p + 1)))
            << "packet " << p;
}

TEST(SinkMapping, HeapsSentInPlaceAreConsumedOnlyOnceSent)
{
    // The upstream buffer holds two heaps and more: heaps go out from it, and what is
    // consumed the upstream may overwrite at once (as the gate's fill below does).
    gate g;
    wire w(1, &g);
    stream_to_heap m(int16_packets(), nullptr);
    three_packets x;
    const bytes original = x.data[0];
    bool waited = false;
    w.slots.set_on_wait([&] {
        waited = true; // with every heap in flight and none sent
        g.open();
    });
    const std::size_t n = m.send(x.in, w.slots);
    g.open();
    EXPECT_TRUE(waited);
    EXPECT_EQ(n % 4, 0u);
    EXPECT_GE(n, 4u);
    std::fill(x.data[0].begin(), x.data[0].begin() + 2 * n, std::uint8_t(0xee));
    x.consume(n);
    EXPECT_EQ(n + send_all(m, x, w), 12u);
    expect_sent_as(w, original);
}

/*! Sends three_packets() through an input \p x whose buffers say the heaps must be
 * copied: consumed at once, before the (shut) gate lets anything out; then overwritten
 * as the upstream may, and still sent as they were. */
void expect_copied_before_sent(input& x)
{
    gate g;
    wire w(1, &g);
    stream_to_heap m(int16_packets(), nullptr);
    const bytes original = x.data[0];
    EXPECT_EQ(m.send(x.in, w.slots), 12u); // the gate is shut: nothing sent yet
    std::fill(x.data[0].begin(), x.data[0].end(), std::uint8_t(0xee));
    g.open();
    expect_sent_as(w, original);
}

TEST(SinkMapping, HeapsAreCopiedWhenTheBufferHoldsFewerThanTwo)
{
    // Sent in place, a heap would keep the upstream from writing the next one whole.
    three_packets x;
    x.in.capacity = 7;
    expect_copied_before_sent(x);
}

TEST(SinkMapping, HeapsAreCopiedFromABufferThatMayMoveItsItems)
{
    // A single-mapped (custom) GNU Radio buffer may move unread items.
    three_packets x;
    x.in.items_stay_put = false;
    expect_copied_before_sent(x);
}

TEST(SinkMapping, HeapsInASwappedByteOrderAreCopiedSwapped)
{
    wire w;
    auto c = int16_packets();
    c.byte_order = byte_order_mode::swap;
    stream_to_heap m(c, nullptr);
    three_packets x;
    EXPECT_EQ(send_all(m, x, w), 12u);
    const auto sent = payloads(w);
    ASSERT_EQ(sent.size(), 3u);
    EXPECT_EQ(sent[0], (bytes{ 2, 1, 4, 3, 6, 5, 8, 7 }));
}

TEST(SinkMapping, ContinuousHeapsSentInPlaceAreConsumedOnlyOnceSent)
{
    gate g;
    wire w(2, &g);
    stream_to_chunk m(int16_series(2), nullptr);
    m.reset();
    input x(2, 8); // two rounds of 4 items
    for (std::size_t i = 0; i < 2; i++)
        for (std::size_t b = 0; b < 16; b++)
            x.data[i][b] = std::uint8_t(16 * i + b);
    const auto original = x.data;
    bool waited = false;
    w.slots.set_on_wait([&] {
        waited = true;
        g.open();
    });
    const std::size_t n = m.send(x.in, w.slots);
    g.open();
    EXPECT_TRUE(waited);
    for (auto& d : x.data)
        std::fill(d.begin(), d.begin() + 2 * n, std::uint8_t(0xee));
    x.consume(n);
    EXPECT_EQ(n + send_all(m, x, w), 8u);
    const auto sent = payloads(w);
    ASSERT_EQ(sent.size(), 4u);
    for (std::size_t h = 0; h < 4; h++) {
        const bytes& d = original[h % 2];
        EXPECT_EQ(sent[h], bytes(d.begin() + 8 * (h / 2), d.begin() + 8 * (h / 2 + 1)))
            << "heap " << h;
    }
}

/*! Stop heaps (STREAM_CTRL 2) on \p w's wire, once it is closed. */
std::size_t stop_heaps(wire& w)
{
    std::size_t stops = 0;
    for (const sent& s : w.packets())
        stops += s.immediates.count(0x06) && s.immediates.at(0x06) == 2;
    return stops;
}

TEST(SinkMapping, AStopHeapGoesToEverySubstreamEvenWhenNothingWasSent)
{
    // head(0) upstream, or every packet dropped: the receivers still hear the end.
    wire w(2);
    stream_to_heap m(int16_packets(), nullptr);
    m.send_stop_heap(w.slots);
    EXPECT_EQ(m.counters().at("control_heaps"), 2u);
    EXPECT_EQ(stop_heaps(w), 2u);
}

TEST(SinkMapping, AStopHeapGoesToEverySubstreamAfterARun)
{
    wire w(2);
    stream_to_heap m(int16_packets(), nullptr);
    input x(1, 4);
    x.tag(0, 0, "packet_len", pmt::from_long(4));
    m.send(x.in, w.slots);
    m.send_stop_heap(w.slots);
    EXPECT_EQ(stop_heaps(w), 2u);
}

// ---- continuous ----------------------------------------------------------------------

TEST(SinkMapping, ContinuousSendsWholeRoundsOneHeapPerInputInputZeroFirst)
{
    wire w(2);
    stream_to_chunk m(int16_series(2), nullptr);
    m.reset();
    input x(2, 10); // two rounds of 4 items, and 2 items over
    EXPECT_EQ(send_all(m, x, w), 8u);
    const auto d = w.data();
    ASSERT_EQ(d.size(), 4u);
    const std::vector<std::uint64_t> timestamps{ 0, 0, 4, 4 };
    for (std::size_t h = 0; h < 4; h++) {
        EXPECT_EQ(d[h].immediates.at(0x1600), timestamps[h]) << h;
        EXPECT_EQ(d[h].immediates.at(0x1601), h % 2) << h;
        EXPECT_EQ(d[h].substream, h % 2) << h;
        EXPECT_EQ(d[h].cnt, h + 1) << h;
        EXPECT_EQ(d[h].payload_length, 8u);
    }
}

TEST(SinkMapping, ContinuousRxTimeTagsRebaseTheTimestamps)
{
    wire w;
    stream_to_chunk m(int16_series(1), nullptr);
    m.reset();
    input x(1, 8);
    x.tag(0,
          4,
          "rx_time",
          pmt::make_tuple(pmt::from_uint64(2), pmt::from_double(0.5))); // 2500 at 1 kHz
    EXPECT_EQ(send_all(m, x, w), 8u);
    const auto d = w.data();
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].immediates.at(0x1600), 0u);
    EXPECT_EQ(d[1].immediates.at(0x1600), 2500u);
    EXPECT_EQ(m.counters().at("rx_time_ignored"), 0u);
}

TEST(SinkMapping, ContinuousRefusesALayoutTheReceiverWouldRefuse)
{
    stream_to_chunk_config c = int16_series(2);
    c.substream_item = 0;
    EXPECT_THROW(stream_to_chunk(c, nullptr), std::invalid_argument);
    c = int16_series(1);
    c.timestamp_item = 0;
    EXPECT_THROW(stream_to_chunk(c, nullptr), std::invalid_argument);
    c = int16_series(1);
    c.item_bytes = 4; // not an int16
    EXPECT_THROW(stream_to_chunk(c, nullptr), std::invalid_argument);
}

} // namespace
