/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// ControlPort asks for each knob apart: one query of all of a block's counters reads
// the block once. (The knobs themselves, over Thrift: tests/python/qa_control_port.py.)

#include "metrics/control_port.h"
#include <gtest/gtest.h>
#include <thread>

namespace {

using namespace gr::spead::metrics;
using namespace std::chrono_literals;

TEST(CounterSnapshot, AQueryBurstReadsTheCountersOnce)
{
    int reads = 0;
    counter_snapshot snapshot(
        [&reads] {
            reads++;
            return std::map<std::string, std::uint64_t>{ { "heaps", 5 },
                                                         { "packets", 9 } };
        },
        1000ms);
    EXPECT_EQ(snapshot.value("heaps"), 5u);
    EXPECT_EQ(snapshot.value("packets"), 9u);
    EXPECT_EQ(snapshot.value("absent"), 0u);
    EXPECT_EQ(reads, 1);
}

TEST(CounterSnapshot, AnOldSnapshotIsReadAgain)
{
    std::uint64_t heaps = 1;
    counter_snapshot snapshot(
        [&heaps] {
            return std::map<std::string, std::uint64_t>{ { "heaps", heaps } };
        },
        10ms);
    EXPECT_EQ(snapshot.value("heaps"), 1u);
    heaps = 2;
    std::this_thread::sleep_for(30ms);
    EXPECT_EQ(snapshot.value("heaps"), 2u);
}

} // namespace
