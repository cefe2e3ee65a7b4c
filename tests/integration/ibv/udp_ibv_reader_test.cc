/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::udp_ibv_reader over the emulated NIC, across a veth pair: host 1 sends with the
// kernel (send::udp_stream, or raw frames from a packet socket), host 2 receives
// through verbs. The emulator's own counters are the ground truth for what the NIC
// dropped. One behaviour per test; ctest runs each in a fresh two-host topology (see
// CMakeLists.txt), some with emulator switches in their environment.

#include "common/file_descriptor.h"
#include "ibv_test_support.h"
#include "log_capture.h"
#include "protocol/packetiser.h"
#include "transport/raw_packet.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/send_udp.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <rdma/rdma_cma.h>
#include <spead_emu/extensions.h>
#include <sys/socket.h>
#include <boost/asio/io_context.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

using spead_test::capture_sink;

namespace {

using namespace gr::spead;
using namespace ibv_test;
using namespace std::chrono_literals;
using boost::asio::ip::make_address;
using boost::asio::ip::make_address_v4;
using boost::asio::ip::udp;
using steady = std::chrono::steady_clock;

constexpr std::uint64_t immediate_id = 0x1001;
constexpr std::uint64_t label_id = 0x1002;
constexpr std::size_t jumbo_packet = 8972; // a 9000-byte MTU's UDP payload
constexpr std::size_t default_slot = 9200 + 42;

#define REQUIRE_ENVIRONMENT(name, value)                                         \
    do {                                                                         \
        const char* set = std::getenv(name);                                     \
        ASSERT_TRUE(set != nullptr && std::string(set) == (value))               \
            << "run with " name "=" value " (CMakeLists.txt sets it for ctest)"; \
    } while (0)

// ---- host 2's emulated device, as the emulator sees it -------------------------------

/*!
 * The emulated device of host 2's eth0, opened through rdma_cm as the reader opens it:
 * every rdma_cm_id of a device shares one context, so this sees the reader's objects
 * and the port's frame counters (the ground truth for NIC drops).
 */
class emulated_port
{
public:
    emulated_port() : d_id(host(2).ip)
    {
        if (!d_api.find())
            throw std::runtime_error("not running over the emulated NIC");
    }
    emulated_port(const emulated_port&) = delete;
    emulated_port& operator=(const emulated_port&) = delete;

    spead_emu_counters counters() const
    {
        spead_emu_counters c{};
        EXPECT_EQ(d_api.query_port_counters(d_id.context(), &c), 0);
        return c;
    }
    /*! Frames that reached the device for a QP: delivered or dropped by the NIC. */
    std::uint64_t frames_seen() const
    {
        const auto c = counters();
        return c.rx_frames_delivered + c.rx_frames_dropped_no_receive +
               c.rx_frames_dropped_qp_not_ready + c.rx_frames_dropped_oversize;
    }
    /*! Waits until \p n frames more than in \p before reached the device (delivered
     * or dropped for want of a receive). */
    bool wait_for_frames_since(const spead_emu_counters& before,
                               std::uint64_t n,
                               std::chrono::milliseconds limit) const
    {
        const std::uint64_t seen_before =
            before.rx_frames_delivered + before.rx_frames_dropped_no_receive;
        return wait_for([&] { return frames_seen() - seen_before >= n; }, limit);
    }
    spead_emu_live_objects live_objects() const
    {
        spead_emu_live_objects objects{};
        EXPECT_EQ(d_api.query_live_objects(d_id.context(), &objects), 0);
        return objects;
    }

private:
    mutable spead_emu_api d_api;
    bound_cm_id d_id;
};

// ---- heaps ----------------------------------------------------------------------------

/*! A heap whose every item can be checked: a patterned payload, an immediate and a
 * small addressed label, all derived from its cnt. */
struct test_heap {
    test_heap(std::uint64_t cnt, std::size_t size) : payload(size)
    {
        fill_pattern(payload.data(), size, cnt);
        const std::string text = "heap " + std::to_string(cnt);
        h.add_item(payload_id, payload.data(), payload.size(), false);
        h.add_immediate(immediate_id, cnt * 7 + 1);
        h.add_item(label_id, std::vector<std::uint8_t>(text.begin(), text.end()), false);
    }
    test_heap(const test_heap&) = delete;
    test_heap& operator=(const test_heap&) = delete;
    std::vector<std::uint8_t> payload; // h points into it
    send::heap h;
};

/*! Checks every byte and item of a received heap against test_heap(cnt, size). */
void expect_test_heap(const recv::heap& h, std::uint64_t cnt, std::size_t size)
{
    ASSERT_TRUE(h.is_complete()) << "heap " << cnt;
    EXPECT_EQ(h.cnt(), cnt);
    EXPECT_EQ(pattern_mismatches(h, payload_id, size, cnt), 0u) << "heap " << cnt;
    const recv::item* immediate = h.find(immediate_id);
    ASSERT_NE(immediate, nullptr) << "heap " << cnt;
    EXPECT_TRUE(immediate->is_immediate);
    EXPECT_EQ(immediate->immediate_value, cnt * 7 + 1);
    const recv::item* label = h.find(label_id);
    ASSERT_NE(label, nullptr) << "heap " << cnt;
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(label->data), label->length),
              "heap " + std::to_string(cnt));
}

/*! Sends from host 1 with the kernel: send::udp_stream on its eth0. */
class kernel_sender
{
public:
    explicit kernel_sender(const std::string& endpoints,
                           send::stream_config config = send::stream_config())
    {
        in_host there(1);
        d_stream = std::make_unique<send::udp_stream>(
            d_io,
            config,
            send::udp_config().set_endpoints(endpoints).set_interface(host(1).netdev));
    }

    /*! Sends heaps cnt first .. first + n - 1 of \p size bytes, round-robin over the
     * substreams. */
    void send_heaps(std::uint64_t first, std::size_t n, std::size_t size)
    {
        for (std::size_t i = 0; i < n; i++) {
            const std::uint64_t cnt = first + i;
            test_heap heap(cnt, size);
            d_stream->send_heap(heap.h,
                                std::int64_t(cnt),
                                std::size_t(cnt) % d_stream->get_num_substreams());
        }
    }
    void send(const send::heap& h, std::int64_t cnt) { d_stream->send_heap(h, cnt); }
    send_stats stats() const { return d_stream->get_stats(); }

private:
    boost::asio::io_context d_io;
    std::unique_ptr<send::udp_stream> d_stream;
};

recv::stream_config roomy_stream()
{
    recv::stream_config config;
    config.set_max_heaps(8).set_queue_heaps(256);
    return config;
}

/*! Up to \p n heaps, waiting at most \p limit for each. */
std::vector<recv::heap>
take(recv::stream& s, std::size_t n, std::chrono::milliseconds limit = 5000ms)
{
    std::vector<recv::heap> heaps;
    while (heaps.size() < n) {
        recv::heap h;
        if (s.pop(h, limit) != recv::stream::pop_result::heap)
            break;
        heaps.push_back(std::move(h));
    }
    return heaps;
}

std::uint64_t frames_rejected(const recv_stats& s)
{
    return s[recv_stat::frames_not_ipv4_udp] + s[recv_stat::frames_vlan] +
           s[recv_stat::frames_ip_options] + s[recv_stat::frames_fragmented] +
           s[recv_stat::frames_truncated];
}

std::string endpoint_of_host2(unsigned short port) { return endpoint_in(2, port); }

// ---- heaps from a kernel sender -------------------------------------------------------

class ReceiveFromKernel : public ::testing::TestWithParam<int>
{
};

TEST_P(ReceiveFromKernel, HeapsArriveBitExact)
{
    REQUIRE_TOPOLOGY();
    const int comp_vector = GetParam();
    constexpr std::size_t heaps = 50;
    constexpr std::size_t size = 200000; // 23 jumbo packets; 1150 in all fit the ring
    recv::stream rs(roomy_stream());
    auto& reader = rs.emplace_reader<recv::udp_ibv_reader>(
        reader_config(endpoint_of_host2(7148), comp_vector));
    EXPECT_EQ(reader.get_comp_vector(), comp_vector);
    // Whole slots, or a striding RQ's WQEs of 1 MiB.
    EXPECT_EQ(reader.get_buffer_size(),
              reader.uses_multi_packet_receive_queue()
                  ? (16u << 20)
                  : (16u << 20) / default_slot * default_slot);

    kernel_sender tx(endpoint_of_host2(7148),
                     send::stream_config().set_max_packet_size(jumbo_packet));
    tx.send_heaps(1, heaps, size);
    const auto got = take(rs, heaps);
    ASSERT_EQ(got.size(), heaps);
    for (std::size_t i = 0; i < heaps; i++)
        expect_test_heap(got[i], i + 1, size);
    rs.stop();

    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::heaps], heaps);
    EXPECT_EQ(stats[recv_stat::packets], tx.stats()[send_stat::packets]);
    EXPECT_EQ(stats[recv_stat::frames_dropped_no_buffer], 0u);
    EXPECT_EQ(frames_rejected(stats), 0u);
    EXPECT_EQ(stats[recv_stat::datagrams_oversize], 0u);
}

INSTANTIATE_TEST_SUITE_P(Modes,
                         ReceiveFromKernel,
                         ::testing::Values(0, -1),
                         [](const ::testing::TestParamInfo<int>& info) {
                             return info.param < 0 ? "busy_poll" : "comp_vector";
                         });

TEST(ReceiveFromKernelAnyAddress, PortOnlyEndpointTakesThePortOnTheInterface)
{
    REQUIRE_TOPOLOGY();
    recv::stream rs(roomy_stream());
    recv::udp_ibv_config config;
    config.set_endpoints("0.0.0.0:7150").set_interface(host(2).netdev);
    EXPECT_EQ(config.get_interface_address(), make_address(host(2).ip));
    rs.emplace_reader<recv::udp_ibv_reader>(config);
    kernel_sender tx(endpoint_of_host2(7150));
    tx.send_heaps(1, 10, 3000);
    const auto got = take(rs, 10);
    ASSERT_EQ(got.size(), 10u);
    for (std::size_t i = 0; i < got.size(); i++)
        expect_test_heap(got[i], i + 1, 3000);
}

// ---- multicast
// --------------------------------------------------------------------------

/*! Groups the kernel has joined on \p netdev (/proc/net/igmp of this namespace). */
std::set<std::string> joined_groups(const std::string& netdev)
{
    std::ifstream igmp("/proc/net/igmp");
    std::set<std::string> groups;
    std::string line;
    std::string device;
    while (std::getline(igmp, line)) {
        if (line.empty())
            continue;
        if (line[0] != '\t') {
            std::istringstream fields(line);
            std::string index;
            fields >> index >> device; // "2\teth0      :     3      V3"
            continue;
        }
        std::istringstream fields(line);
        std::string hex;
        fields >> hex;
        if (device != netdev || hex.size() != 8)
            continue;
        // The group as the kernel stores it (network order), printed as a host integer.
        const auto value = std::uint32_t(std::stoul(hex, nullptr, 16));
        in_addr address{};
        address.s_addr = value;
        groups.insert(inet_ntoa(address));
    }
    return groups;
}

TEST(ReceiveMulticast, TwoGroupsGivenAsARangeAreJoinedWhileTheReaderLives)
{
    REQUIRE_TOPOLOGY();
    const std::string netdev = host(2).netdev;
    ASSERT_EQ(joined_groups(netdev).count("239.77.1.1"), 0u);
    {
        recv::stream rs(roomy_stream());
        rs.emplace_reader<recv::udp_ibv_reader>(reader_config("239.77.1.1+1:7149"));
        const auto joined = joined_groups(netdev);
        EXPECT_EQ(joined.count("239.77.1.1"), 1u);
        EXPECT_EQ(joined.count("239.77.1.2"), 1u);

        // Two substreams, one per group: odd cnts to 239.77.1.2, even ones to .1.
        kernel_sender tx("239.77.1.1+1:7149");
        tx.send_heaps(1, 20, 5000);
        const auto got = take(rs, 20);
        ASSERT_EQ(got.size(), 20u);
        for (std::size_t i = 0; i < got.size(); i++)
            expect_test_heap(got[i], i + 1, 5000);
        rs.stop();
        EXPECT_EQ(rs.get_stats()[recv_stat::packets], tx.stats()[send_stat::packets]);
    }
    const auto left = joined_groups(netdev);
    EXPECT_EQ(left.count("239.77.1.1"), 0u) << "membership outlived the reader";
    EXPECT_EQ(left.count("239.77.1.2"), 0u) << "membership outlived the reader";
}

// ---- frames the NIC dropped
// ------------------------------------------------------------

/*!
 * A ring of 16 slots that nobody polls yet takes 16 of a burst of 100 single-packet
 * heaps; the NIC drops the other 84. Once started, the reader delivers the 16 and
 * counts what the device lets it count.
 */
void ring_overflow_case(bool drops_countable)
{
    constexpr std::size_t slots = 16;
    constexpr std::size_t burst = 100;
    auto log = capture_sink::instance();
    emulated_port truth;
    const auto before = truth.counters();
    recv::stream rs(roomy_stream());
    auto reader = std::make_unique<recv::udp_ibv_reader>(
        rs, reader_config(endpoint_of_host2(7151)).set_buffer_size(slots * default_slot));
    EXPECT_EQ(reader->get_buffer_size(), slots * default_slot);

    kernel_sender tx(endpoint_of_host2(7151));
    tx.send_heaps(1, burst, 1000);
    ASSERT_EQ(tx.stats()[send_stat::packets], burst);
    ASSERT_TRUE(truth.wait_for_frames_since(before, burst, 10s));
    const auto after = truth.counters();
    ASSERT_EQ(after.rx_frames_delivered - before.rx_frames_delivered, slots);
    ASSERT_EQ(after.rx_frames_dropped_no_receive - before.rx_frames_dropped_no_receive,
              burst - slots);

    rs.add_reader(std::move(reader)); // starts it
    const auto got = take(rs, slots);
    ASSERT_EQ(got.size(), slots);
    for (std::size_t i = 0; i < slots; i++)
        expect_test_heap(got[i], i + 1, 1000);
    rs.stop();

    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::packets], slots);
    if (drops_countable) {
        EXPECT_EQ(stats[recv_stat::frames_dropped_no_buffer], burst - slots);
        // sent = received + counted as dropped
        EXPECT_EQ(tx.stats()[send_stat::packets],
                  stats[recv_stat::packets] + stats[recv_stat::frames_dropped_no_buffer]);
    } else {
        EXPECT_EQ(stats[recv_stat::frames_dropped_no_buffer], 0u);
        EXPECT_TRUE(contains(log->text(), "frames_dropped_no_buffer cannot be counted"))
            << log->text();
    }
}

TEST(ReceiveDrops, FramesBeyondTheRingAreCountedByTheFlowCounters)
{
    REQUIRE_TOPOLOGY();
    ring_overflow_case(true);
}

TEST(ReceiveDrops, WithoutFlowCountersThePortsOutOfBufferCounts)
{
    REQUIRE_TOPOLOGY();
    REQUIRE_ENVIRONMENT("SPEAD_EMU_FLOW_COUNTERS", "0");
    ring_overflow_case(true);
    const std::string log = capture_sink::instance()->text();
    EXPECT_TRUE(contains(log, "out_of_buffer counter")) << log;
    EXPECT_TRUE(contains(log, "port-wide")) << log;
}

TEST(ReceiveDrops, WithNeitherCounterTheLogSaysDropsGoUncounted)
{
    REQUIRE_TOPOLOGY();
    REQUIRE_ENVIRONMENT("SPEAD_EMU_FLOW_COUNTERS", "0");
    REQUIRE_ENVIRONMENT("SPEAD_EMU_HW_COUNTERS", "0");
    ring_overflow_case(false);
}

/*!
 * A running reader with a 2-slot ring under a burst: whatever the NIC drops is counted
 * while it receives (within a second of the burst) and exactly at the end, and agrees
 * with the emulator's count.
 */
TEST(ReceiveDrops, DropsWhileReceivingReconcileWithWhatWasSent)
{
    REQUIRE_TOPOLOGY();
    constexpr std::size_t burst = 3000;
    emulated_port truth;
    recv::stream rs(recv::stream_config().set_max_heaps(8).set_queue_heaps(4096));
    rs.emplace_reader<recv::udp_ibv_reader>(
        reader_config(endpoint_of_host2(7152)).set_buffer_size(2 * default_slot));
    kernel_sender tx(endpoint_of_host2(7152));
    tx.send_heaps(1, burst, 1000);
    ASSERT_TRUE(wait_for([&] { return truth.frames_seen() >= burst; }, 20s));
    const auto nic = truth.counters();
    const std::uint64_t dropped =
        nic.rx_frames_dropped_no_receive + nic.rx_frames_dropped_qp_not_ready;
    std::cout << "the NIC dropped " << dropped << " of " << burst << " frames"
              << std::endl;
    // Read while receiving: the counters are polled, so allow a moment.
    EXPECT_TRUE(wait_for(
        [&] { return rs.get_stats()[recv_stat::frames_dropped_no_buffer] == dropped; },
        2s))
        << rs.get_stats()[recv_stat::frames_dropped_no_buffer];
    ASSERT_TRUE(wait_for(
        [&] { return rs.get_stats()[recv_stat::packets] + dropped >= burst; }, 10s));
    rs.stop();
    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::frames_dropped_no_buffer], dropped);
    EXPECT_EQ(tx.stats()[send_stat::packets],
              stats[recv_stat::packets] + stats[recv_stat::frames_dropped_no_buffer]);
    EXPECT_EQ(stats[recv_stat::heaps], stats[recv_stat::packets]);
}

// ---- frames the reader rejects
// ---------------------------------------------------------

/*! Raw frames from host 1's eth0 to host 2's MAC, as a wire would carry them. */
class raw_frame_sender
{
public:
    raw_frame_sender()
    {
        in_host there(1);
        d_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
        if (d_fd < 0)
            throw std::system_error(errno, std::generic_category(), "AF_PACKET socket");
        d_address.sll_family = AF_PACKET;
        d_address.sll_ifindex = int(if_nametoindex(host(1).netdev.c_str()));
        d_address.sll_halen = 6;
    }
    ~raw_frame_sender() { close(d_fd); }
    void send(const std::vector<std::uint8_t>& frame)
    {
        ASSERT_EQ(sendto(d_fd,
                         frame.data(),
                         frame.size(),
                         0,
                         reinterpret_cast<const sockaddr*>(&d_address),
                         sizeof(d_address)),
                  ssize_t(frame.size()))
            << std::strerror(errno);
    }

private:
    int d_fd = -1;
    sockaddr_ll d_address{};
};

mac_address parse_mac(const std::string& text)
{
    unsigned int b[6] = {};
    std::sscanf(
        text.c_str(), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]);
    mac_address mac{};
    for (int i = 0; i < 6; i++)
        mac[i] = std::uint8_t(b[i]);
    return mac;
}

/*! The SPEAD packet of a one-packet test heap. */
std::vector<std::uint8_t> spead_packet(std::uint64_t cnt, std::size_t size)
{
    test_heap heap(cnt, size);
    send::packet_generator generator(heap.h, cnt, 9000);
    std::vector<std::uint8_t> header(9000);
    std::vector<send::packet_piece> pieces;
    generator.next(header.data(), pieces);
    std::vector<std::uint8_t> out;
    for (const auto& p : pieces)
        out.insert(out.end(), p.data, p.data + p.length);
    return out;
}

/*! An Ethernet/IPv4/UDP frame from host 1 to host 2:port carrying \p payload. */
std::vector<std::uint8_t> frame_to_host2(unsigned short port,
                                         const std::vector<std::uint8_t>& payload)
{
    udp_flow flow;
    flow.src_mac = parse_mac(host(1).mac);
    flow.dst_mac = parse_mac(host(2).mac);
    flow.src_ip = make_address_v4(host(1).ip).to_uint();
    flow.dst_ip = make_address_v4(host(2).ip).to_uint();
    flow.src_port = 40000;
    flow.dst_port = port;
    udp_frame_builder builder(flow, 64);
    std::vector<std::uint8_t> frame(udp_frame_overhead + payload.size());
    builder.write_headers(frame.data(), payload.size());
    std::copy(payload.begin(), payload.end(), frame.begin() + udp_frame_overhead);
    return frame;
}

void refresh_ip_checksum(std::vector<std::uint8_t>& frame)
{
    std::uint8_t* ip = frame.data() + ethernet_header_size;
    ip[10] = ip[11] = 0;
    std::uint32_t sum = 0;
    const std::size_t header = std::size_t(ip[0] & 0xf) * 4;
    for (std::size_t i = 0; i < header; i += 2)
        sum += std::uint32_t(ip[i] << 8 | ip[i + 1]);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    ip[10] = std::uint8_t(~sum >> 8);
    ip[11] = std::uint8_t(~sum);
}

TEST(ReceiveFrames, MalformedFramesAreRejectedAndCounted)
{
    REQUIRE_TOPOLOGY();
    constexpr unsigned short port = 7153;
    emulated_port truth;
    recv::stream rs(roomy_stream());
    rs.emplace_reader<recv::udp_ibv_reader>(reader_config(endpoint_of_host2(port)));
    raw_frame_sender wire;

    // IPv4 options: a 24-byte header (one NOP-padded option word) before the UDP one.
    auto with_options = frame_to_host2(port, spead_packet(1, 500));
    with_options.insert(with_options.begin() + ethernet_header_size + ipv4_header_size,
                        { 1, 1, 1, 0 });
    with_options[ethernet_header_size] = 0x46;
    const std::size_t total = with_options.size() - ethernet_header_size;
    with_options[ethernet_header_size + 2] = std::uint8_t(total >> 8);
    with_options[ethernet_header_size + 3] = std::uint8_t(total);
    refresh_ip_checksum(with_options);
    // A first fragment: more-fragments set (and DF clear).
    auto fragment = frame_to_host2(port, spead_packet(2, 500));
    fragment[ethernet_header_size + 6] = 0x20;
    fragment[ethernet_header_size + 7] = 0;
    refresh_ip_checksum(fragment);
    // A UDP length beyond the IPv4 datagram.
    auto truncated = frame_to_host2(port, spead_packet(3, 500));
    const std::size_t udp_length = truncated.size() - 34 + 100;
    truncated[ethernet_header_size + ipv4_header_size + 4] =
        std::uint8_t(udp_length >> 8);
    truncated[ethernet_header_size + ipv4_header_size + 5] = std::uint8_t(udp_length);
    auto good = frame_to_host2(port, spead_packet(4, 500));

    for (const auto* frame : { &with_options, &fragment, &truncated, &good })
        wire.send(*frame);
    // One frame to wait for: 20 s, as the emulated NIC under ThreadSanitizer on a busy
    // machine once took more than 5 s; what the NIC saw says where a miss was.
    const auto got = take(rs, 1, 20s);
    const auto nic = truth.counters();
    ASSERT_EQ(got.size(), 1u) << "the NIC delivered " << nic.rx_frames_delivered
                              << ", dropped (no receive) "
                              << nic.rx_frames_dropped_no_receive
                              << ", dropped (QP not ready) "
                              << nic.rx_frames_dropped_qp_not_ready << "; the reader saw "
                              << rs.get_stats()[recv_stat::packets] << " packets, "
                              << frames_rejected(rs.get_stats()) << " rejected";
    expect_test_heap(got[0], 4, 500);
    ASSERT_TRUE(wait_for([&] { return frames_rejected(rs.get_stats()) >= 3; }, 5s));
    rs.stop();
    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::frames_ip_options], 1u);
    EXPECT_EQ(stats[recv_stat::frames_fragmented], 1u);
    EXPECT_EQ(stats[recv_stat::frames_truncated], 1u);
    EXPECT_EQ(stats[recv_stat::packets], 1u);
    EXPECT_EQ(truth.counters().rx_frames_delivered, 4u) << "the NIC steered all four";
}

TEST(ReceiveFrames, FrameLargerThanASlotIsCountedAndTheReaderRecovers)
{
    REQUIRE_TOPOLOGY();
    auto log = capture_sink::instance();
    recv::stream rs(roomy_stream());
    rs.emplace_reader<recv::udp_ibv_reader>(
        reader_config(endpoint_of_host2(7154)).set_max_size(1000));
    kernel_sender tx(endpoint_of_host2(7154));
    tx.send_heaps(1, 1, 1300); // one packet of about 1350 bytes: more than a slot
    ASSERT_TRUE(
        wait_for([&] { return rs.get_stats()[recv_stat::datagrams_oversize] == 1; }, 5s));
    // With slots the QP went to the error state and the reader has put it back to
    // work; a multi-packet receive queue took the frame and the reader dropped it.
    std::this_thread::sleep_for(100ms);
    tx.send_heaps(2, 5, 500);
    const auto got = take(rs, 5);
    ASSERT_EQ(got.size(), 5u);
    for (std::size_t i = 0; i < got.size(); i++)
        expect_test_heap(got[i], i + 2, 500);
    rs.stop();
    EXPECT_EQ(rs.get_stats()[recv_stat::datagrams_oversize], 1u);
    EXPECT_TRUE(contains(log->text(), "raise max_size")) << log->text();
}

// ---- configuration
// ----------------------------------------------------------------------

TEST(ReaderConfig, DefaultsAreSpead2s)
{
    recv::udp_ibv_config c;
    EXPECT_TRUE(c.get_endpoints().empty());
    EXPECT_TRUE(c.get_interface_address().is_unspecified());
    EXPECT_EQ(c.get_buffer_size(), 16u * 1024 * 1024);
    EXPECT_EQ(c.get_max_size(), 9200u);
    EXPECT_EQ(c.get_max_poll(), 10);
    EXPECT_EQ(c.get_comp_vector(), 0);
}

TEST(ReaderConfig, EndpointsMustBeIpv4WithAPort)
{
    recv::udp_ibv_config c;
    expect_invalid([&] { c.set_endpoints("239.1.2.3"); }, "endpoints");
    expect_invalid([&] { c.set_endpoints("239.1.2.3:0"); }, "endpoints");
    expect_invalid([&] { c.set_endpoints(""); }, "endpoints");
    expect_invalid([&] { c.add_endpoint(udp::endpoint(make_address("ff02::1"), 7148)); },
                   "endpoints");
    expect_invalid([&] { c.set_endpoints({ udp::endpoint(make_address("::1"), 1) }); },
                   "endpoints");
    EXPECT_TRUE(c.get_endpoints().empty());
    c.set_endpoints("239.1.2.3+3:7148,10.0.0.1:7149,:7150");
    EXPECT_EQ(c.get_endpoints().size(), 6u);
    c.add_endpoint(udp::endpoint(make_address("0.0.0.0"), 7151));
    EXPECT_EQ(c.get_endpoints().size(), 7u);
}

TEST(ReaderConfig, InterfaceMustBeAnIpv4AddressOrALocalNetdev)
{
    recv::udp_ibv_config c;
    expect_invalid([&] { c.set_interface_address(make_address("::1")); },
                   "interface_address");
    expect_invalid([&] { c.set_interface_address(make_address("0.0.0.0")); },
                   "interface_address");
    expect_invalid([&] { c.set_interface_address(make_address("239.1.2.3")); },
                   "interface_address");
    expect_invalid([&] { c.set_interface("nosuchif0"); }, "interface");
    c.set_interface("lo");
    EXPECT_EQ(c.get_interface_address(), make_address("127.0.0.1"));
    c.set_interface_address(make_address("10.1.2.3"));
    EXPECT_EQ(c.get_interface_address(), make_address("10.1.2.3"));
}

TEST(ReaderConfig, BufferSizeZeroMeansTheDefault)
{
    recv::udp_ibv_config c;
    c.set_buffer_size(1 << 20);
    EXPECT_EQ(c.get_buffer_size(), 1u << 20);
    c.set_buffer_size(0);
    EXPECT_EQ(c.get_buffer_size(), recv::udp_ibv_config::default_buffer_size);
}

TEST(ReaderConfig, MaxSizeIsAUdpPayloadSize)
{
    recv::udp_ibv_config c;
    expect_invalid([&] { c.set_max_size(0); }, "max_size");
    expect_invalid([&] { c.set_max_size(63); }, "max_size");
    expect_invalid([&] { c.set_max_size(65508); }, "max_size");
    c.set_max_size(64).set_max_size(65507);
    EXPECT_EQ(c.get_max_size(), 65507u);
}

TEST(ReaderConfig, MaxPollMustBePositive)
{
    recv::udp_ibv_config c;
    expect_invalid([&] { c.set_max_poll(0); }, "max_poll");
    expect_invalid([&] { c.set_max_poll(-1); }, "max_poll");
    c.set_max_poll(1);
    EXPECT_EQ(c.get_max_poll(), 1);
}

TEST(ReaderConfig, AnyCompVectorIsAccepted)
{
    recv::udp_ibv_config c;
    c.set_comp_vector(-5);
    EXPECT_EQ(c.get_comp_vector(), -5);
    c.set_comp_vector(1000); // taken modulo the device's vectors by the reader
    EXPECT_EQ(c.get_comp_vector(), 1000);
}

TEST(ReaderErrors, WithoutEndpoints)
{
    recv::stream rs;
    recv::udp_ibv_config config;
    config.set_interface("lo");
    expect_invalid([&] { recv::udp_ibv_reader reader(rs, config); }, "endpoints");
}

TEST(ReaderErrors, WithoutInterface)
{
    recv::stream rs;
    recv::udp_ibv_config config;
    config.set_endpoints("239.1.2.3:7148");
    expect_invalid([&] { recv::udp_ibv_reader reader(rs, config); }, "interface_address");
}

TEST(ReaderErrors, BufferSmallerThanOneSlot)
{
    REQUIRE_TOPOLOGY();
    recv::stream rs;
    auto config =
        reader_config(endpoint_of_host2(7155)).set_buffer_size(default_slot - 1);
    try {
        recv::udp_ibv_reader reader(rs, config);
        ADD_FAILURE() << "accepted a ring without a slot";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("buffer_size:", 0), 0u) << e.what();
        EXPECT_TRUE(contains(e.what(), "give at least " + std::to_string(default_slot)))
            << e.what();
    }
}

TEST(ReaderErrors, BufferLargerThanTheDeviceAllowsIsClampedWithAWarning)
{
    REQUIRE_TOPOLOGY();
    auto log = capture_sink::instance();
    recv::stream rs;
    // 64-byte packets: slots of 106 bytes, 40000 of them; the device takes 32768 WRs.
    auto config = reader_config(endpoint_of_host2(7156)).set_max_size(64);
    config.set_buffer_size(40000 * 106);
    recv::udp_ibv_reader reader(rs, config);
    EXPECT_EQ(reader.get_buffer_size(), 32768u * 106);
    EXPECT_TRUE(contains(log->text(), "max_qp_wr")) << log->text();
    EXPECT_TRUE(contains(log->text(), "using " + std::to_string(32768 * 106) + " bytes"))
        << log->text();
    EXPECT_TRUE(contains(log->text(), "32768 slots of 106 bytes")) << log->text();
}

/*! Child side of the error tests: builds the default reader and says what happened. */
TEST(ReaderChild, BuildReader)
{
    if (!is_child())
        GTEST_SKIP() << "runs only as a child of another test";
    print_build_outcome([] {
        recv::stream rs;
        recv::udp_ibv_reader reader(rs, reader_config(endpoint_of_host2(7157)));
    });
}

TEST(ReaderErrors, WithoutCapNetRawSaysWhichCapabilityAndHowToGrantIt)
{
    REQUIRE_TOPOLOGY();
    const auto child = run_child(without_cap_net_raw(), "ReaderChild.BuildReader", {});
    ASSERT_EQ(child.exit_code, 0) << child.output;
    EXPECT_TRUE(
        contains(child.output,
                 "SYSTEM_ERROR " + std::to_string(EPERM) + ": ibv_create_qp(RAW_PACKET)"))
        << child.output;
    EXPECT_TRUE(contains(child.output, "need CAP_NET_RAW")) << child.output;
    EXPECT_TRUE(contains(child.output, "setcap cap_net_raw+ep")) << child.output;
    EXPECT_TRUE(contains(child.output, "--ambient-caps=+net_raw")) << child.output;
    EXPECT_FALSE(contains(child.output, "BUILT"));
}

TEST(ReaderErrors, InterfaceWithoutAnRdmaDeviceSaysSoAndWhatToUseInstead)
{
    REQUIRE_TOPOLOGY();
    // The emulator gives only loopback a device: eth0 has none.
    const auto child =
        run_child({}, "ReaderChild.BuildReader", { "SPEAD_EMU_NETDEVS=lo" });
    ASSERT_EQ(child.exit_code, 0) << child.output;
    EXPECT_TRUE(contains(child.output, "SYSTEM_ERROR " + std::to_string(ENODEV)))
        << child.output;
    EXPECT_TRUE(
        contains(child.output, "no RDMA device owns interface " + host(2).ip + " (eth0)"))
        << child.output;
    EXPECT_TRUE(contains(child.output, "ibv_devices")) << child.output;
    EXPECT_TRUE(contains(child.output, "transport udp")) << child.output;
}

TEST(ReaderErrors, RealRdmaCoreWithoutHardwareFindsNoDevice)
{
    REQUIRE_TOPOLOGY();
    // An empty LD_LIBRARY_PATH: the child loads the installed rdma-core, and these
    // machines have no RDMA NIC (and no kernel support for one).
    const auto child = run_child({}, "ReaderChild.BuildReader", { "LD_LIBRARY_PATH=" });
    ASSERT_EQ(child.exit_code, 0) << child.output;
    EXPECT_FALSE(contains(child.output, "spead-emu")) << "the emulator was loaded";
    EXPECT_TRUE(contains(child.output, "SYSTEM_ERROR")) << child.output;
    EXPECT_TRUE(contains(child.output, "no RDMA device owns interface " + host(2).ip))
        << child.output;
    EXPECT_TRUE(contains(child.output, "ibv_devices")) << child.output;
}

TEST(ReaderErrors, MemlockTooLowPrintsTheLimitAndHowToRaiseIt)
{
    REQUIRE_TOPOLOGY();
    // 64 KiB may be pinned, the ring needs 16 MiB; without CAP_IPC_LOCK the limit holds.
    const auto child = run_child(with_64k_memlock(), "ReaderChild.BuildReader", {});
    ASSERT_EQ(child.exit_code, 0) << child.output;
    EXPECT_TRUE(
        contains(child.output, "SYSTEM_ERROR " + std::to_string(ENOMEM) + ": ibv_reg_mr"))
        << child.output;
    EXPECT_TRUE(contains(child.output, "RLIMIT_MEMLOCK is 64 KiB (hard limit 64 KiB)"))
        << child.output;
    EXPECT_TRUE(contains(child.output, "ulimit -l unlimited")) << child.output;
}

TEST(ReaderCompVector, TakenModuloTheDevicesVectors)
{
    REQUIRE_TOPOLOGY();
    REQUIRE_ENVIRONMENT("SPEAD_EMU_COMP_VECTORS", "4");
    const std::pair<int, int> cases[] = { { 5, 1 }, { 3, 3 },   { 4, 0 },
                                          { 9, 1 }, { -1, -1 }, { -7, -1 } };
    for (const auto& [asked, used] : cases) {
        recv::stream rs;
        recv::udp_ibv_reader reader(rs, reader_config(endpoint_of_host2(7158), asked));
        EXPECT_EQ(reader.get_comp_vector(), used) << "comp_vector " << asked;
    }
}

// ---- lifecycle
// ---------------------------------------------------------------------------

/*! One reader's life: built, started, a few heaps received, stopped, destroyed. */
void reader_cycle(kernel_sender& tx, std::uint64_t first_cnt, int comp_vector)
{
    recv::stream rs(roomy_stream());
    rs.emplace_reader<recv::udp_ibv_reader>(
        reader_config(endpoint_of_host2(7159), comp_vector)
            .set_buffer_size(64 * default_slot));
    tx.send_heaps(first_cnt, 3, 2000);
    const auto got = take(rs, 3);
    ASSERT_EQ(got.size(), 3u);
    for (std::size_t i = 0; i < got.size(); i++)
        expect_test_heap(got[i], first_cnt + i, 2000);
    rs.stop();
}

TEST(ReaderLifecycle, StartStopCyclesLeakNoFdsThreadsOrVerbsObjects)
{
    REQUIRE_TOPOLOGY();
    const char* cycles_text = std::getenv("IBV_READER_CYCLES");
    const int cycles = cycles_text ? std::atoi(cycles_text) : 40;
    emulated_port device;
    kernel_sender tx(endpoint_of_host2(7159));
    // The first reader opens what lives as long as the process (rdma_cm, logging).
    reader_cycle(tx, 1, 0);
    const std::size_t fds = count_open_fds();
    const std::size_t threads = count_threads();
    for (int i = 0; i < cycles; i++)
        reader_cycle(tx, 100 + 10 * std::uint64_t(i), i % 2 == 0 ? 0 : -1);
    EXPECT_EQ(count_open_fds(), fds);
    EXPECT_EQ(count_threads(), threads);
    EXPECT_EQ(device.live_objects(), spead_emu_live_objects{}); // every field 0
}

class ReaderStop : public ::testing::TestWithParam<int>
{
};

TEST_P(ReaderStop, ReturnsWithinASecondWhenNothingArrives)
{
    REQUIRE_TOPOLOGY();
    recv::stream rs;
    auto config = reader_config(endpoint_of_host2(7160), GetParam());
    rs.emplace_reader<recv::udp_ibv_reader>(config.set_max_poll(1000));
    std::this_thread::sleep_for(300ms);
    const auto start = steady::now();
    rs.stop();
    EXPECT_LT(steady::now() - start, 1s);
}

INSTANTIATE_TEST_SUITE_P(Modes,
                         ReaderStop,
                         ::testing::Values(0, -1),
                         [](const ::testing::TestParamInfo<int>& info) {
                             return info.param < 0 ? "busy_poll" : "comp_vector";
                         });

TEST(ReaderLifecycle, AStopHeapEndsTheStreamAndTheReader)
{
    REQUIRE_TOPOLOGY();
    recv::stream rs(roomy_stream());
    rs.emplace_reader<recv::udp_ibv_reader>(reader_config(endpoint_of_host2(7161)));
    kernel_sender tx(endpoint_of_host2(7161));
    tx.send_heaps(1, 2, 3000);
    send::heap stop;
    stop.add_end();
    tx.send(stop, 3);
    ASSERT_TRUE(wait_for([&] { return rs.is_stopped(); }, 5s));
    const auto got = take(rs, 2, 100ms);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(rs.get_stats()[recv_stat::stop_heaps], 1u);
    const auto start = steady::now();
    rs.stop();
    EXPECT_LT(steady::now() - start, 1s);
}

} // namespace

/*! The descriptors this process has open now. */
std::set<int> open_fds()
{
    std::set<int> out;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
        out.insert(std::stoi(entry.path().filename().string()));
    return out;
}

/*! The async event fd of host 2's device context (shared by every rdma_cm_id of the
 * process, so the reader's too). */
int device_async_fd() { return bound_cm_id(host(2).ip).context()->async_fd; }

/*! Of \p fds, the read end of a pipe set non-blocking: the completion channel (the
 * reader makes its channel and the device's async fd non-blocking; the device's
 * other pipes are not). */
int nonblocking_pipe_read_end(const std::set<int>& fds)
{
    int found = -1;
    const int async_fd = device_async_fd();
    for (int fd : fds) {
        if (fd == async_fd)
            continue;
        const int flags = fcntl(fd, F_GETFL);
        std::error_code ec;
        const auto target =
            std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
        if (!ec && target.string().rfind("pipe:", 0) == 0 && flags >= 0 &&
            (flags & O_ACCMODE) == O_RDONLY && (flags & O_NONBLOCK)) {
            EXPECT_EQ(found, -1) << "more than one candidate completion channel";
            found = fd;
        }
    }
    return found;
}

TEST(ReaderFailure, ABrokenCompletionChannelEndsTheStreamAndIsCounted)
{
    REQUIRE_TOPOLOGY();
    recv::stream rs(roomy_stream());
    const std::set<int> before = open_fds();
    rs.emplace_reader<recv::udp_ibv_reader>(reader_config(endpoint_of_host2(7162), 0));
    std::set<int> created;
    for (int fd : open_fds())
        if (!before.count(fd))
            created.insert(fd);
    const int channel = nonblocking_pipe_read_end(created);
    ASSERT_GE(channel, 0);

    kernel_sender tx(endpoint_of_host2(7162));
    tx.send_heaps(1, 2, 3000);
    ASSERT_EQ(take(rs, 2).size(), 2u);

    // Something else in the process replaces the channel's descriptor by a pipe whose
    // writer has gone: poll() reports it hung up at once, every time.
    int ends[2];
    ASSERT_EQ(pipe2(ends, O_CLOEXEC), 0);
    close(ends[1]);
    ASSERT_EQ(dup2(ends[0], channel), channel);
    close(ends[0]);

    ASSERT_TRUE(wait_for([&] { return rs.is_stopped(); }, 5s));
    EXPECT_TRUE(rs.has_failed());
    EXPECT_TRUE(contains(rs.get_failure(), "completion channel")) << rs.get_failure();
    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::reader_errors], 1u);
    EXPECT_EQ(stats[recv_stat::heaps], 2u);
    recv::heap h;
    EXPECT_EQ(rs.pop(h, 1s), recv::stream::pop_result::stopped);
    const auto start = steady::now();
    rs.stop();
    EXPECT_LT(steady::now() - start, 1s);
}

// ---- the receive queue: fixed slots or a multi-packet receive queue ---------------

/*! What the device under test should give: a striding RQ on the emulator's cx5 model
 * (unless GR_SPEAD_IBV_MPRQ=0), fixed slots on the plain device. */
bool expect_multi_packet_queue()
{
    const char* model = std::getenv("SPEAD_EMU_MODEL");
    const char* forced = std::getenv("GR_SPEAD_IBV_MPRQ");
    return model != nullptr && std::string(model) == "cx5" &&
           !(forced != nullptr && std::string(forced) == "0");
}

constexpr std::size_t stride = 64;
constexpr std::size_t frame_overhead = 42; // Ethernet, IPv4 and UDP headers

/*! Frames a ring holds: whole slots, or on a striding RQ whole strides per frame,
 * never spanning two WQEs. */
std::size_t frames_held(bool multi_packet,
                        std::size_t ring_bytes,
                        std::size_t wqe_bytes,
                        std::size_t frame_bytes)
{
    if (!multi_packet)
        return ring_bytes / default_slot;
    const std::size_t strides = (frame_bytes + stride - 1) / stride;
    return ring_bytes / wqe_bytes * (wqe_bytes / stride / strides);
}

TEST(ReceiveQueue, TheDeviceDecidesAndTheLogSaysWhich)
{
    REQUIRE_TOPOLOGY();
    auto log = capture_sink::instance();
    recv::stream rs;
    recv::udp_ibv_reader reader(rs, reader_config(endpoint_of_host2(7170)));
    EXPECT_EQ(reader.uses_multi_packet_receive_queue(), expect_multi_packet_queue());
    // ... and the stats say it too (stats().at("ibv_multi_packet_queues") in a block).
    EXPECT_EQ(reader.transport_stats()[recv_stat::ibv_multi_packet_queues],
              expect_multi_packet_queue() ? 1u : 0u);
    if (expect_multi_packet_queue()) {
        EXPECT_TRUE(
            contains(log->text(),
                     "multi-packet receive queue (striding RQ) of 16 WQEs x 16384 "
                     "strides of 64 bytes = 16777216 bytes"))
            << log->text();
        EXPECT_EQ(reader.get_buffer_size(), 16u << 20);
    } else {
        EXPECT_TRUE(contains(log->text(),
                             "slots of 9242 bytes (no multi-packet receive "
                             "queue: "))
            << log->text();
    }
}

TEST(ReceiveQueue, TheEnvironmentForcesSlots)
{
    REQUIRE_TOPOLOGY();
    REQUIRE_ENVIRONMENT("SPEAD_EMU_MODEL", "cx5");
    REQUIRE_ENVIRONMENT("GR_SPEAD_IBV_MPRQ", "0");
    auto log = capture_sink::instance();
    recv::stream rs;
    recv::udp_ibv_reader reader(rs, reader_config(endpoint_of_host2(7171)));
    EXPECT_FALSE(reader.uses_multi_packet_receive_queue());
    EXPECT_EQ(reader.transport_stats()[recv_stat::ibv_multi_packet_queues], 0u);
    EXPECT_TRUE(contains(log->text(), "GR_SPEAD_IBV_MPRQ=0 forces fixed slots"))
        << log->text();
}

/*! Heaps of many sizes, in 1472- and 8972-byte packets, arrive whole in either queue. */
TEST(ReceiveQueue, MixedPacketSizesArriveLossless)
{
    REQUIRE_TOPOLOGY();
    recv::stream rs(roomy_stream());
    rs.emplace_reader<recv::udp_ibv_reader>(reader_config(endpoint_of_host2(7172)));
    send::stream_config jumbo;
    jumbo.set_max_packet_size(jumbo_packet);
    kernel_sender small(endpoint_of_host2(7172));
    kernel_sender large(endpoint_of_host2(7172), jumbo);
    const std::size_t sizes[] = { 1, 100, 1400, 3000, 20000, 70000 };
    std::uint64_t cnt = 1;
    for (int round = 0; round < 5; round++)
        for (const std::size_t size : sizes) {
            (cnt % 2 ? small : large).send_heaps(cnt, 1, size);
            cnt++;
        }
    const auto got = take(rs, cnt - 1);
    ASSERT_EQ(got.size(), cnt - 1);
    for (std::size_t i = 0; i < got.size(); i++)
        expect_test_heap(got[i], i + 1, sizes[i % std::size(sizes)]);
    rs.stop();
    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::packets],
              small.stats()[send_stat::packets] + large.stats()[send_stat::packets]);
    EXPECT_EQ(stats[recv_stat::frames_dropped_no_buffer], 0u);
    EXPECT_EQ(stats[recv_stat::incomplete_heaps_evicted], 0u);
}

/*!
 * The figure users size rings by: how many packets of one size a 16 MiB ring that
 * nobody polls yet takes before the NIC drops. Slots hold 16 MiB / 9242; a striding
 * RQ holds as many as whole 64-byte strides allow.
 */
class RingCapacity : public ::testing::TestWithParam<std::size_t>
{
};

TEST_P(RingCapacity, A16MiBRingHoldsWhatItsLayoutAllows)
{
    REQUIRE_TOPOLOGY();
    const std::size_t payload = GetParam();
    const bool multi_packet = expect_multi_packet_queue();
    const std::size_t expected =
        frames_held(multi_packet, 16u << 20, 1u << 20, payload + frame_overhead);
    const std::size_t burst = expected + 200;
    emulated_port truth;
    const auto before = truth.counters();
    recv::stream rs(roomy_stream());
    auto reader = std::make_unique<recv::udp_ibv_reader>(
        rs, reader_config(endpoint_of_host2(7173)));
    ASSERT_EQ(reader->uses_multi_packet_receive_queue(), multi_packet);

    // Raw UDP datagrams of exactly `payload` bytes from host 1, paced so the emulator
    // keeps up.
    file_descriptor fd;
    {
        in_host there(1);
        fd = file_descriptor(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    }
    ASSERT_TRUE(fd);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(7173);
    inet_pton(AF_INET, host(2).ip.c_str(), &to.sin_addr);
    std::vector<std::uint8_t> datagram(payload, 0x5a);
    for (std::size_t i = 0; i < burst; i++) {
        ASSERT_EQ(sendto(fd.get(),
                         datagram.data(),
                         datagram.size(),
                         0,
                         reinterpret_cast<sockaddr*>(&to),
                         sizeof(to)),
                  ssize_t(payload));
        if (i % 64 == 63)
            std::this_thread::sleep_for(1ms);
    }
    ASSERT_TRUE(truth.wait_for_frames_since(before, burst, 20s));
    const auto after = truth.counters();
    EXPECT_EQ(after.rx_frames_dropped_socket_overflow,
              before.rx_frames_dropped_socket_overflow);
    EXPECT_EQ(after.rx_frames_delivered - before.rx_frames_delivered, expected);
    EXPECT_EQ(after.rx_frames_dropped_no_receive - before.rx_frames_dropped_no_receive,
              burst - expected);
    std::cout << "ring of " << reader->get_buffer_size() << " bytes ("
              << (multi_packet ? "multi-packet receive queue" : "slots") << ") held "
              << after.rx_frames_delivered - before.rx_frames_delivered << " packets of "
              << payload << " bytes\n";

    // Once started, the reader takes them all (not SPEAD: counted as bad headers)
    // and counts the rest as dropped.
    rs.add_reader(std::move(reader));
    ASSERT_TRUE(wait_for(
        [&] {
            const recv_stats s = rs.get_stats();
            return s[recv_stat::frames_dropped_no_buffer] == burst - expected;
        },
        10s));
    rs.stop();
}

INSTANTIATE_TEST_SUITE_P(Payloads,
                         RingCapacity,
                         ::testing::Values(std::size_t(1472), jumbo_packet),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                             return std::to_string(info.param) + "bytes";
                         });

/*! The ring_overflow_case of a striding RQ: two 32 KiB WQEs, a burst the NIC partly
 * drops; delivered and dropped add up to what was sent. */
TEST(MultiPacketQueue, FramesBeyondTheQueueAreCountedExactly)
{
    REQUIRE_TOPOLOGY();
    REQUIRE_ENVIRONMENT("SPEAD_EMU_MODEL", "cx5");
    constexpr std::size_t burst = 100;
    emulated_port truth;
    const auto before = truth.counters();
    recv::stream rs(roomy_stream());
    auto reader = std::make_unique<recv::udp_ibv_reader>(
        rs, reader_config(endpoint_of_host2(7174)).set_buffer_size(64 * 1024));
    ASSERT_TRUE(reader->uses_multi_packet_receive_queue());
    EXPECT_EQ(reader->get_buffer_size(), 64u * 1024);

    kernel_sender tx(endpoint_of_host2(7174));
    tx.send_heaps(1, burst, 1000);
    ASSERT_EQ(tx.stats()[send_stat::packets], burst);
    const std::size_t packet = tx.stats()[send_stat::bytes] / burst;
    const std::size_t held =
        frames_held(true, 64 * 1024, 32 * 1024, packet + frame_overhead);
    ASSERT_TRUE(truth.wait_for_frames_since(before, burst, 10s));
    const auto after = truth.counters();
    ASSERT_EQ(after.rx_frames_delivered - before.rx_frames_delivered, held);

    rs.add_reader(std::move(reader));
    const auto got = take(rs, held);
    ASSERT_EQ(got.size(), held);
    for (std::size_t i = 0; i < held; i++)
        expect_test_heap(got[i], i + 1, 1000);
    rs.stop();
    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::packets], held);
    EXPECT_EQ(stats[recv_stat::frames_dropped_no_buffer], burst - held);
    EXPECT_EQ(tx.stats()[send_stat::packets],
              stats[recv_stat::packets] + stats[recv_stat::frames_dropped_no_buffer]);
}

int main(int argc, char** argv)
{
    // The receiver is host 2, whose eth0 has the emulated device; senders move a
    // thread into host 1 as they need.
    return ibv_test::run_all_tests_in_host(argc, argv, 2);
}
