/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// A continuous stream's chunk settings (protocol/chunk_config.h): their checks, and
// the chunk size chosen when none is given.

#include "error_message.h"
#include "protocol/chunk_config.h"
#include <gtest/gtest.h>
#include <cstdint>
#include <stdexcept>
#include <string>

using namespace gr::spead;

TEST(chunk_config, validation_names_the_field_the_value_and_the_fix)
{
    const auto message = [](const chunk_config& config) {
        return spead_test::error_message<std::invalid_argument>(
            [&] { config.validate(); });
    };
    chunk_config config;
    config.heap_bytes = 4096;
    config.timestamp_item = 0x1600;
    EXPECT_EQ(message(config), "");
    config.heap_bytes = 0;
    EXPECT_EQ(message(config).rfind("heap_bytes: 0", 0), 0u);
    config.heap_bytes = 4096;
    config.timestamp_item = 0;
    EXPECT_EQ(message(config).rfind("timestamp_item: 0", 0), 0u);
    config.timestamp_item = 0x1600;
    config.substream_item = 0x1600;
    EXPECT_EQ(message(config).rfind("substream_item: 5632 is the timestamp item", 0), 0u);
    config.substream_item = 0;
    config.heap_bytes = std::size_t(1) << 30;
    config.timeline.window_heaps = 64;
    EXPECT_NE(message(config).find("GiB of window"), std::string::npos)
        << message(config);
    config.timeline.window_heaps = 0;
    EXPECT_EQ(message(config).rfind("window_heaps: 0", 0), 0u);
    config.timeline.window_heaps = 8;
    config.chunk_positions = 9;
    EXPECT_EQ(message(config).rfind("chunk_positions: 9 is more than the window", 0), 0u);
    config.chunk_positions = 0;
    config.first_substream = 4;
    EXPECT_EQ(message(config).rfind("first_substream: 4 with no substream_item", 0), 0u);
    config.substream_item = 0x1601;
    EXPECT_EQ(message(config), "");
    config.timeline.substreams = 2;
    config.first_substream = ~std::uint64_t(0);
    EXPECT_NE(message(config).find("passes 2^64"), std::string::npos) << message(config);
}

TEST(chunk_config, chunks_hold_about_a_mebibyte_and_at_most_a_quarter_window)
{
    chunk_config config;
    config.timeline.window_heaps = 64;
    config.heap_bytes = 8192;
    EXPECT_EQ(config.positions_per_chunk(), 16u); // a quarter of the window
    EXPECT_EQ(config.live_chunks(), 5u);
    config.heap_bytes = 1 << 19;
    EXPECT_EQ(config.positions_per_chunk(), 2u); // 1 MiB
    config.heap_bytes = 1 << 22;
    EXPECT_EQ(config.positions_per_chunk(), 1u);
    EXPECT_EQ(config.live_chunks(), 65u);
    config.chunk_positions = 3;
    EXPECT_EQ(config.positions_per_chunk(), 3u);
    EXPECT_EQ(config.live_chunks(), 23u);
}
