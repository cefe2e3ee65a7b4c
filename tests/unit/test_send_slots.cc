/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send_slots passes on a transport's failure for good, which is how spead.sink's
// work() learns that it must end its flowgraph.

#include "mapping/send_slots.h"
#include "protocol/packet_writer.h"
#include <gtest/gtest.h>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

namespace {

using namespace gr::spead;
using namespace std::chrono_literals;

/*! A transport whose device is dead: the first write says so, every write fails. */
class dead_writer : public send::packet_writer
{
public:
    std::size_t write_packets(const send::packet*,
                              std::size_t,
                              boost::system::error_code& ec) override
    {
        if (!d_reported)
            failure("the test's NIC died; make the sink again");
        d_reported = true;
        ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
        return 0;
    }

private:
    bool d_reported = false;
};

/*! \p slots sending one 100-byte heap. */
void send_one(send_slots& slots)
{
    const send_slots::slot_ref slot = slots.acquire(100, flavour());
    std::memset(slot.payload, 7, 100);
    slot.heap.add_item(0x1000, slot.payload, 100, false);
    slots.send(slot.index, 1, 0);
}

TEST(SendSlots, ATransportThatFailsForGoodIsReportedOnceItHas)
{
    send_slots slots(4, nullptr);
    slots.open(std::make_unique<send::stream>(
        slots.io(), send::stream_config(), 1, std::make_unique<dead_writer>()));
    EXPECT_FALSE(slots.has_failed());
    EXPECT_EQ(slots.failure(), "");
    send_one(slots);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!slots.has_failed() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    EXPECT_EQ(slots.failure(), "the test's NIC died; make the sink again");
    slots.close(); // at once: the failed heap has completed
    const send_stats stats = slots.stats();
    EXPECT_EQ(stats[send_stat::writer_errors], 1u);
    EXPECT_EQ(stats[send_stat::heaps_failed], 1u);
}

} // namespace
