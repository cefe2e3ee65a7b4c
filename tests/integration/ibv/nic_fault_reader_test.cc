/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What recv::udp_ibv_reader does when its NIC has a bad day: faults injected into the
// emulated device of host 2 (spead_emu_inject_fault, spead_emu_set_frame_faults) while
// host 1 sends single-packet heaps with the kernel. Each fault either is recovered from
// and counted (port down and up, a QP in the error state, frames dropped, duplicated or
// reordered on the way) or ends the stream with its cause (CQ overrun, device fatal,
// device removed), never a hang or a silent stop. Frames sent reconcile with frames
// received plus what the reader and the emulator counted.

#include "ibv_test_support.h"
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/send_udp.h>
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>
#include <spead_emu/extensions.h>
#include <system_error>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <stdexcept>

namespace {

using namespace gr::spead;
using namespace ibv_test;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr std::size_t heap_bytes = 1000; // one packet per heap

/*! Host 2's emulated device: faults go in, its counters come out. Opened through
 * rdma_cm, as the reader opens it (one shared context per device). */
class faulty_nic
{
public:
    faulty_nic() : d_name("emu_" + host(2).netdev), d_id(host(2).ip)
    {
        if (!d_api.find())
            throw std::runtime_error("not running over the emulated NIC");
    }
    faulty_nic(const faulty_nic&) = delete;
    faulty_nic& operator=(const faulty_nic&) = delete;

    void inject(spead_emu_fault fault)
    {
        ASSERT_EQ(d_api.inject_fault(d_name.c_str(), fault), 0);
    }
    void set_frame_faults(double drop, double duplicate, double reorder)
    {
        ASSERT_EQ(d_api.set_frame_faults(d_name.c_str(), drop, duplicate, reorder), 0);
    }
    spead_emu_counters counters() const
    {
        spead_emu_counters c{};
        EXPECT_EQ(d_api.query_port_counters(d_id.context(), &c), 0);
        return c;
    }
    bool listed() const
    {
        int n = 0;
        ibv_device** list = ibv_get_device_list(&n);
        bool found = false;
        for (int i = 0; i < n; i++)
            found |= d_name == ibv_get_device_name(list[i]);
        ibv_free_device_list(list);
        return found;
    }

private:
    std::string d_name;
    spead_emu_api d_api;
    bound_cm_id d_id;
};

/*! Host 1 sends single-packet heaps numbered from 1 with the kernel. */
class heap_source
{
public:
    explicit heap_source(unsigned short port)
    {
        in_host there(1);
        d_stream =
            std::make_unique<send::udp_stream>(d_io,
                                               send::stream_config(),
                                               send::udp_config()
                                                   .set_endpoints(endpoint_in(2, port))
                                                   .set_interface(host(1).netdev));
    }
    void send(std::size_t n)
    {
        std::vector<std::uint8_t> payload(heap_bytes);
        for (std::size_t i = 0; i < n; i++) {
            const std::uint64_t cnt = ++d_sent;
            fill_pattern(payload.data(), payload.size(), cnt);
            send::heap h;
            h.add_item(payload_id, payload.data(), payload.size(), false);
            d_stream->send_heap(h, std::int64_t(cnt));
        }
    }
    std::uint64_t packets() const { return d_stream->get_stats()[send_stat::packets]; }

private:
    boost::asio::io_context d_io;
    std::unique_ptr<send::udp_stream> d_stream;
    std::uint64_t d_sent = 0;
};

/*! The cnts of the heaps popped within \p limit each, up to \p n. */
std::vector<std::uint64_t>
pop_cnts(recv::stream& s, std::size_t n, std::chrono::milliseconds limit = 5000ms)
{
    std::vector<std::uint64_t> cnts;
    recv::heap h;
    while (cnts.size() < n && s.pop(h, limit) == recv::stream::pop_result::heap) {
        EXPECT_EQ(pattern_mismatches(h, payload_id, heap_bytes, h.cnt()), 0u);
        cnts.push_back(h.cnt());
    }
    return cnts;
}

std::vector<std::uint64_t> range(std::uint64_t first, std::uint64_t last)
{
    std::vector<std::uint64_t> out;
    for (std::uint64_t c = first; c <= last; c++)
        out.push_back(c);
    return out;
}

recv::stream_config small_stream()
{
    return recv::stream_config().set_max_heaps(4).set_queue_heaps(1024);
}

/*! Both ways of waiting: on the completion channel, and busy polling. */
class NicFaults : public ::testing::TestWithParam<int>
{
protected:
    /*! Host 2's device, a stream with one ibverbs reader on \p port (waiting as the
     * parameter says) and host 1's source, which has delivered heaps 1 to \p heaps:
     * the ordinary traffic a fault then interrupts. */
    void receive_first_heaps(unsigned short port, std::size_t heaps)
    {
        nic = std::make_unique<faulty_nic>();
        rs = std::make_unique<recv::stream>(small_stream());
        rs->emplace_reader<recv::udp_ibv_reader>(
            reader_config(endpoint_in(2, port), GetParam()));
        tx = std::make_unique<heap_source>(port);
        tx->send(heaps);
        ASSERT_EQ(pop_cnts(*rs, heaps), range(1, heaps));
    }
    /*! After the fault: \p heaps more, cnts \p first on, all arrive; the stream then
     * stops, not failed. \return its counters. */
    recv_stats receive_again_and_stop(std::size_t heaps, std::uint64_t first)
    {
        tx->send(heaps);
        EXPECT_EQ(pop_cnts(*rs, heaps), range(first, first + heaps - 1));
        rs->stop();
        EXPECT_FALSE(rs->has_failed()) << rs->get_failure();
        return rs->get_stats();
    }

    std::unique_ptr<faulty_nic> nic;
    std::unique_ptr<recv::stream> rs;
    std::unique_ptr<heap_source> tx;
};

std::string mode_name(const ::testing::TestParamInfo<int>& info)
{
    return info.param < 0 ? "busy_poll" : "comp_vector";
}

TEST_P(NicFaults, PortDownLosesFramesCountsTheEventAndReceivingResumes)
{
    REQUIRE_TOPOLOGY();
    ASSERT_NO_FATAL_FAILURE(receive_first_heaps(7170, 10));

    nic->inject(SPEAD_EMU_FAULT_PORT_DOWN);
    ASSERT_TRUE(wait_for(
        [&] { return rs->get_stats()[recv_stat::ibv_port_down_events] == 1; }, 5s))
        << "the reader did not notice IBV_EVENT_PORT_ERR";
    tx->send(10); // lost on the way, counted by the emulator
    ASSERT_TRUE(
        wait_for([&] { return nic->counters().rx_frames_dropped_port_down == 10; }, 5s));
    nic->inject(SPEAD_EMU_FAULT_PORT_UP);
    const recv_stats stats = receive_again_and_stop(10, 21);
    EXPECT_EQ(stats[recv_stat::ibv_port_down_events], 1u);
    EXPECT_EQ(stats[recv_stat::ibv_qp_recoveries], 0u);
    // Sent = received + lost while the port was down.
    EXPECT_EQ(tx->packets(),
              stats[recv_stat::packets] + nic->counters().rx_frames_dropped_port_down);
    EXPECT_EQ(stats[recv_stat::packets], 20u);
}

TEST_P(NicFaults, QueuePairInTheErrorStateIsResetCountedAndReceivesAgain)
{
    REQUIRE_TOPOLOGY();
    ASSERT_NO_FATAL_FAILURE(receive_first_heaps(7171, 5));

    nic->inject(SPEAD_EMU_FAULT_QP_FATAL);
    ASSERT_TRUE(
        wait_for([&] { return rs->get_stats()[recv_stat::ibv_qp_recoveries] >= 1; }, 5s))
        << "the reader did not reset its QP after IBV_EVENT_QP_FATAL";
    const recv_stats stats = receive_again_and_stop(5, 6);
    EXPECT_EQ(stats[recv_stat::ibv_qp_recoveries], 1u);
    const spead_emu_counters c = nic->counters();
    EXPECT_EQ(tx->packets(),
              stats[recv_stat::packets] + c.rx_frames_dropped_qp_not_ready +
                  c.rx_frames_dropped_no_receive);
}

/*! Waits for the stream to end on its own with a failure naming \p cause; the heaps
 * before it were delivered and stop() is prompt. */
void expect_ended_by(recv::stream& rs, const std::string& cause, std::uint64_t heaps)
{
    ASSERT_TRUE(wait_for([&] { return rs.is_stopped(); }, 5s))
        << "the stream did not end: " << cause << " was not handled";
    EXPECT_TRUE(rs.has_failed());
    EXPECT_TRUE(contains(rs.get_failure(), cause)) << rs.get_failure();
    const recv_stats stats = rs.get_stats();
    EXPECT_EQ(stats[recv_stat::reader_errors], 1u);
    EXPECT_EQ(stats[recv_stat::heaps], heaps);
    recv::heap h;
    EXPECT_EQ(rs.pop(h, 1s), recv::stream::pop_result::stopped);
    const auto start = steady::now();
    rs.stop();
    EXPECT_LT(steady::now() - start, 1s);
}

TEST_P(NicFaults, CompletionQueueOverrunEndsTheStreamWithTheCause)
{
    REQUIRE_TOPOLOGY();
    ASSERT_NO_FATAL_FAILURE(receive_first_heaps(7172, 3));
    nic->inject(SPEAD_EMU_FAULT_CQ_OVERRUN);
    expect_ended_by(*rs, "overran (IBV_EVENT_CQ_ERR)", 3);
}

TEST_P(NicFaults, DeviceFatalEndsTheStreamWithTheCauseAndTheFix)
{
    REQUIRE_TOPOLOGY();
    ASSERT_NO_FATAL_FAILURE(receive_first_heaps(7173, 3));
    nic->inject(SPEAD_EMU_FAULT_DEVICE_FATAL);
    expect_ended_by(*rs, "fatal error (IBV_EVENT_DEVICE_FATAL)", 3);
    EXPECT_TRUE(contains(rs->get_failure(), "dmesg")) << rs->get_failure();
}

TEST_P(NicFaults, DeviceRemovedWhileReceivingEndsTheStreamAndSaysSo)
{
    REQUIRE_TOPOLOGY();
    ASSERT_NO_FATAL_FAILURE(receive_first_heaps(7174, 3));
    ASSERT_TRUE(nic->listed());
    nic->inject(SPEAD_EMU_FAULT_DEVICE_REMOVED);
    EXPECT_FALSE(nic->listed());
    expect_ended_by(*rs, "was removed", 3);
    // A new reader on it is refused at construction, naming the interface.
    EXPECT_THROW(recv::stream(small_stream())
                     .emplace_reader<recv::udp_ibv_reader>(
                         reader_config(host(2).ip + ":7175", GetParam())),
                 std::exception);
}

TEST_P(NicFaults, FramesDroppedDuplicatedAndReorderedReconcile)
{
    REQUIRE_TOPOLOGY();
    faulty_nic nic;
    recv::stream rs(recv::stream_config().set_max_heaps(16).set_queue_heaps(1024));
    rs.emplace_reader<recv::udp_ibv_reader>(
        reader_config(host(2).ip + ":7176", GetParam()));
    heap_source tx(7176);
    nic.set_frame_faults(0.05, 0.05, 0.05);
    constexpr std::size_t sent = 400;
    tx.send(sent);
    // Every frame settles: delivered (a held one at the latest when the wire is idle)
    // or dropped.
    ASSERT_TRUE(wait_for(
        [&] {
            const auto c = nic.counters();
            return c.rx_frames_delivered + c.rx_frames_dropped_injected ==
                   sent + c.rx_frames_duplicated_injected;
        },
        10s));
    ASSERT_TRUE(wait_for(
        [&] {
            return rs.get_stats()[recv_stat::packets] ==
                   nic.counters().rx_frames_delivered;
        },
        5s));
    rs.stop();
    const spead_emu_counters c = nic.counters();
    EXPECT_GT(c.rx_frames_dropped_injected, 0u);
    EXPECT_GT(c.rx_frames_duplicated_injected, 0u);
    EXPECT_GT(c.rx_frames_reordered_injected, 0u);
    const recv_stats stats = rs.get_stats();
    EXPECT_FALSE(rs.has_failed()) << rs.get_failure();
    // Sent + duplicated on the way = received + dropped on the way.
    EXPECT_EQ(tx.packets() + c.rx_frames_duplicated_injected,
              stats[recv_stat::packets] + c.rx_frames_dropped_injected);
    EXPECT_EQ(stats[recv_stat::frames_dropped_no_buffer], 0u);
    // Each heap is one frame: a duplicate is counted as one (its heap is not
    // delivered twice), a dropped frame is a heap that never comes.
    EXPECT_EQ(stats[recv_stat::packets_duplicate], c.rx_frames_duplicated_injected);
    EXPECT_EQ(stats[recv_stat::heaps], sent - c.rx_frames_dropped_injected);
}

INSTANTIATE_TEST_SUITE_P(Modes, NicFaults, ::testing::Values(0, -1), mode_name);

} // namespace

int main(int argc, char** argv)
{
    // Host 2 receives through its emulated device; the sender moves a thread to host 1.
    return ibv_test::run_all_tests_in_host(argc, argv, 2);
}
