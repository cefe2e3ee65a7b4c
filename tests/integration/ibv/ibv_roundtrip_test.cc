/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// ibverbs to ibverbs across a veth pair: send::udp_ibv_stream in host 1,
// recv::udp_ibv_reader in host 2, both over the emulated NIC, at stream level. What
// the sender counts as sent, the receiver must count as received or dropped.

#include "ibv_test_support.h"
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <memory>

namespace {

using namespace gr::spead;
using namespace ibv_test;
using namespace std::chrono_literals;

constexpr unsigned short port = default_port; // sender_config()'s

/*! Heaps arriving in host 2 through recv::udp_ibv_reader. */
class verbs_receiver
{
public:
    verbs_receiver(const std::string& endpoint, int comp_vector, std::size_t ring = 0)
    {
        in_host there(2);
        recv::stream_config config;
        config.set_max_heaps(8).set_queue_heaps(4096);
        d_stream = std::make_unique<recv::stream>(config);
        recv::udp_ibv_config ibv;
        ibv.set_endpoints(endpoint)
            .set_interface(host(2).ip)
            .set_comp_vector(comp_vector)
            .set_buffer_size(ring);
        d_stream->emplace_reader<recv::udp_ibv_reader>(ibv);
    }
    ~verbs_receiver() { stop(); }
    void stop()
    {
        if (d_stream)
            d_stream->stop();
    }

    std::vector<recv::heap> take(std::size_t n, std::chrono::milliseconds limit = 5000ms)
    {
        std::vector<recv::heap> heaps;
        while (heaps.size() < n) {
            recv::heap h;
            if (d_stream->pop(h, limit) != recv::stream::pop_result::heap)
                break;
            heaps.push_back(std::move(h));
        }
        return heaps;
    }
    recv_stats stats() const { return d_stream->get_stats(); }

private:
    std::unique_ptr<recv::stream> d_stream;
};

send::stream_config jumbo_stream()
{
    send::stream_config config;
    config.set_max_packet_size(8972).set_max_heaps(8);
    return config;
}

/*! Sends \p heaps heaps of \p heap_size from one registered region (zero-copy) and
 * checks them, and the counters on both sides, at the receiver. */
void round_trip(const std::string& destination,
                int comp_vector,
                std::size_t heaps,
                std::size_t heap_size)
{
    verbs_receiver receiver(destination + ":" + std::to_string(port), comp_vector);
    std::vector<std::uint8_t> region(heaps * heap_size);
    for (std::size_t i = 0; i < heaps; i++)
        fill_pattern(region.data() + i * heap_size, heap_size, i + 1);
    boost::asio::io_context io;
    auto config = sender_config(destination, comp_vector);
    config.add_memory_region(region.data(), region.size());
    send::udp_ibv_stream sender(io, jumbo_stream(), config);
    for (std::size_t i = 0; i < heaps; i++) {
        send::heap h;
        h.add_item(payload_id, region.data() + i * heap_size, heap_size, false);
        sender.send_heap(h, std::int64_t(i + 1));
    }

    const auto got = receiver.take(heaps);
    ASSERT_EQ(got.size(), heaps);
    for (std::size_t i = 0; i < heaps; i++) {
        EXPECT_EQ(got[i].cnt(), i + 1);
        EXPECT_EQ(pattern_mismatches(got[i], payload_id, heap_size, i + 1), 0u)
            << "heap " << i + 1;
    }
    const send_stats s = sender.get_stats();
    const recv_stats r = receiver.stats();
    EXPECT_EQ(s[send_stat::heaps], heaps);
    EXPECT_EQ(s[send_stat::packets_zero_copy], s[send_stat::packets]);
    EXPECT_EQ(r[recv_stat::packets], s[send_stat::packets]);
    EXPECT_EQ(r[recv_stat::heaps], heaps);
    EXPECT_EQ(r[recv_stat::frames_dropped_no_buffer], 0u);
}

TEST(IbvRoundTrip, UnicastWithCompletionChannels)
{
    REQUIRE_TOPOLOGY();
    round_trip(host(2).ip, 0, 64, 100000);
}

TEST(IbvRoundTrip, MulticastBusyPolling)
{
    REQUIRE_TOPOLOGY();
    round_trip("239.10.0.1", -1, 64, 100000);
}

TEST(IbvRoundTrip, ReceiveRingSmallerThanAHeapReconcilesWithTheSender)
{
    REQUIRE_TOPOLOGY();
    // 8 receive slots against 16-packet heaps sent back to back: whatever the receiving
    // NIC drops for want of a posted buffer, it counts.
    verbs_receiver receiver(
        endpoint_in(2, port), 0, 8 * (recv::udp_ibv_config::default_max_size + 42));
    constexpr std::size_t heaps = 40, heap_size = 16 * 8928;
    std::vector<std::uint8_t> region(heap_size);
    fill_pattern(region.data(), region.size(), 1);
    boost::asio::io_context io;
    auto config = sender_config(host(2).ip, 0);
    config.add_memory_region(region.data(), region.size());
    send::udp_ibv_stream sender(io, jumbo_stream(), config);
    send::heap h;
    h.add_item(payload_id, region.data(), heap_size, false);
    for (std::size_t i = 0; i < heaps; i++)
        sender.send_heap(h, std::int64_t(i + 1));
    const auto got = receiver.take(heaps, 2000ms);
    receiver.stop();
    const recv_stats r = receiver.stats();
    const std::uint64_t sent = sender.get_stats()[send_stat::packets];
    EXPECT_EQ(r[recv_stat::packets] + r[recv_stat::frames_dropped_no_buffer], sent);
    for (const auto& heap : got)
        EXPECT_EQ(pattern_mismatches(heap, payload_id, heap_size, 1), 0u);
}

} // namespace

int main(int argc, char** argv) { return ibv_test::run_all_tests_in_host(argc, argv, 1); }
