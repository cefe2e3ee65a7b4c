/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What send::udp_ibv_stream does when its NIC has a bad day: faults injected into the
// emulated device of host 1 (spead_emu_inject_fault) while it sends single-packet heaps
// to a kernel receiver in host 2. A port that goes down makes the sender wait (bounded)
// instead of throwing frames onto a dead link; a fatal device fails every heap with
// the cause in the log. Never a hang.

#include "ibv_test_support.h"
#include "log_capture.h"
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <gtest/gtest.h>
#include <spead_emu/extensions.h>
#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>
#include <memory>
#include <thread>

namespace {

using namespace gr::spead;
using namespace ibv_test;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr unsigned short fault_port = 7190;
constexpr std::size_t heap_bytes = 1000;

/*! Host 1's emulated device, where the faults go. */
class sender_nic
{
public:
    sender_nic() : d_name("emu_" + host(1).netdev)
    {
        if (!d_api.find())
            throw std::runtime_error("not running over the emulated NIC");
    }
    void inject(spead_emu_fault fault)
    {
        ASSERT_EQ(d_api.inject_fault(d_name.c_str(), fault), 0);
        // The sender reads the device's events at most once a millisecond.
        std::this_thread::sleep_for(20ms);
    }
    spead_emu_counters counters()
    {
        spead_emu_counters c{};
        EXPECT_EQ(d_api.query_device_counters(d_name.c_str(), &c), 0);
        return c;
    }

private:
    std::string d_name;
    spead_emu_api d_api;
};

/*! A kernel UDP receiver in host 2 that collects heap cnts. */
class cnt_receiver
{
public:
    cnt_receiver()
    {
        in_host there(2);
        d_stream = std::make_unique<recv::stream>(
            recv::stream_config().set_max_heaps(4).set_queue_heaps(1024));
        d_stream->emplace_reader<recv::udp_reader>(
            recv::udp_config()
                .set_endpoints(endpoint_in(2, fault_port))
                .set_interface(host(2).netdev));
    }
    ~cnt_receiver() { d_stream->stop(); }
    /*! The cnts of up to \p n heaps, waiting at most \p limit for each. */
    std::vector<std::uint64_t> take(std::size_t n,
                                    std::chrono::milliseconds limit = 5000ms)
    {
        std::vector<std::uint64_t> cnts;
        recv::heap h;
        while (cnts.size() < n &&
               d_stream->pop(h, limit) == recv::stream::pop_result::heap)
            cnts.push_back(h.cnt());
        return cnts;
    }

private:
    std::unique_ptr<recv::stream> d_stream;
};

class fault_sender
{
public:
    fault_sender()
        : d_payload(heap_bytes),
          d_stream(d_io, send::stream_config(), sender_config(host(2).ip, 0, fault_port))
    {
    }
    /*! Sends heap \p cnt; the error it failed with, or success. */
    boost::system::error_code send(std::uint64_t cnt)
    {
        fill_pattern(d_payload.data(), d_payload.size(), cnt);
        send::heap h;
        h.add_item(payload_id, d_payload.data(), d_payload.size(), false);
        try {
            d_stream.send_heap(h, std::int64_t(cnt));
        } catch (const boost::system::system_error& e) {
            return e.code();
        }
        return {};
    }
    send_stats stats() const { return d_stream.get_stats(); }
    std::string failure() const { return d_stream.get_failure(); }

private:
    std::vector<std::uint8_t> d_payload;
    boost::asio::io_context d_io;
    send::udp_ibv_stream d_stream;
};

std::vector<std::uint64_t> cnts(std::initializer_list<std::uint64_t> list)
{
    return list;
}

/*! Host 1's faulty NIC, a sender through it and a receiver in host 2. */
struct send_path {
    sender_nic nic;
    cnt_receiver receiver;
    fault_sender sender;

    /*! Heap 1 goes through, before any fault. */
    void first_heap_arrives()
    {
        EXPECT_FALSE(sender.send(1));
        ASSERT_EQ(receiver.take(1), cnts({ 1 }));
    }
};

TEST(SendFaults, PortDownWaitsForTheLinkAndSendingResumesWhenItIsUp)
{
    REQUIRE_TOPOLOGY();
    send_path path;
    auto& [nic, receiver, sender] = path;
    ASSERT_NO_FATAL_FAILURE(path.first_heap_arrives());

    nic.inject(SPEAD_EMU_FAULT_PORT_DOWN);
    boost::system::error_code second;
    std::thread writer([&] { second = sender.send(2); });
    std::this_thread::sleep_for(500ms); // the heap waits for the port
    nic.inject(SPEAD_EMU_FAULT_PORT_UP);
    writer.join();
    EXPECT_FALSE(second) << second.message();
    EXPECT_EQ(receiver.take(1), cnts({ 2 })) << "the heap went onto the dead link";

    const send_stats s = sender.stats();
    EXPECT_EQ(s[send_stat::heaps], 2u);
    EXPECT_EQ(s[send_stat::heaps_failed], 0u);
    // Sent = received + lost on the wire (none: the sender waited).
    EXPECT_EQ(nic.counters().tx_frames_lost, 0u);
}

TEST(SendFaults, PortDownBeyondTheLimitFailsHeapsUntilItIsUp)
{
    REQUIRE_TOPOLOGY();
    send_path path;
    auto& [nic, receiver, sender] = path;
    nic.inject(SPEAD_EMU_FAULT_PORT_DOWN);
    const auto start = steady::now();
    EXPECT_EQ(sender.send(1), boost::system::errc::network_down);
    const auto waited = steady::now() - start;
    EXPECT_GE(waited, 4500ms);
    EXPECT_LT(waited, 15s);
    // Still down: the next heap fails at once.
    const auto again = steady::now();
    EXPECT_EQ(sender.send(2), boost::system::errc::network_down);
    EXPECT_LT(steady::now() - again, 1s);
    nic.inject(SPEAD_EMU_FAULT_PORT_UP);
    EXPECT_FALSE(sender.send(3));
    EXPECT_EQ(receiver.take(1), cnts({ 3 }));
    const send_stats s = sender.stats();
    EXPECT_EQ(s[send_stat::heaps_failed], 2u);
    EXPECT_EQ(s[send_stat::heaps], 1u);
    EXPECT_EQ(nic.counters().tx_frames_lost, 0u);
    EXPECT_EQ(sender.failure(), "") << "a port that is down is not a dead device";
}

TEST(SendFaults, DeviceFatalFailsEveryHeapAndTheLogSaysWhy)
{
    REQUIRE_TOPOLOGY();
    auto log = spead_test::capture_sink::instance();
    send_path path;
    auto& [nic, receiver, sender] = path;
    ASSERT_NO_FATAL_FAILURE(path.first_heap_arrives());
    nic.inject(SPEAD_EMU_FAULT_DEVICE_FATAL);
    const auto start = steady::now();
    EXPECT_EQ(sender.send(2), boost::system::errc::io_error);
    EXPECT_EQ(sender.send(3), boost::system::errc::io_error);
    EXPECT_LT(steady::now() - start, 2s);
    const std::string text = log->text();
    EXPECT_TRUE(contains(text, "fatal error (IBV_EVENT_DEVICE_FATAL)")) << text;
    const send_stats s = sender.stats();
    EXPECT_EQ(s[send_stat::heaps], 1u);
    EXPECT_EQ(s[send_stat::heaps_failed], 2u);
    // The stream reports it, so that its user stops sending (spead.sink ends).
    EXPECT_TRUE(contains(sender.failure(), "IBV_EVENT_DEVICE_FATAL")) << sender.failure();
    EXPECT_EQ(s[send_stat::writer_errors], 1u);
}

} // namespace

int main(int argc, char** argv)
{
    // The sender is host 1; the receiver moves a thread into host 2.
    return ibv_test::run_all_tests_in_host(argc, argv, 1);
}
