/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "error_message.h"
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/send_heap.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace gr::spead;
using testing::HasSubstr;

namespace {
/*! The message of the std::invalid_argument that \p f throws ("" if none). */
template <typename F>
std::string invalid_argument_message(F f)
{
    return spead_test::error_message<std::invalid_argument>(f);
}
} // namespace

TEST(send_heap, rejects_null_id_naming_the_fix)
{
    send::heap h;
    const std::uint32_t value = 1;
    const auto message =
        invalid_argument_message([&] { h.add_item(0x0, &value, sizeof(value)); });
    EXPECT_THAT(message, HasSubstr("0x0"));
    EXPECT_THAT(message, HasSubstr("0x7 or above"));
    EXPECT_TRUE(h.empty());
}

TEST(send_heap, rejects_each_per_packet_special_id)
{
    for (std::uint64_t id = 1; id <= 4; id++) {
        send::heap h;
        const auto message = invalid_argument_message([&] { h.add_immediate(id, 1); });
        EXPECT_THAT(message, HasSubstr("0x" + std::to_string(id)));
        EXPECT_THAT(message, HasSubstr("per-packet special"));
    }
}

TEST(send_heap, rejects_id_above_the_flavours_id_field)
{
    send::heap h(flavour(40)); // 23-bit ids
    const auto message = invalid_argument_message([&] { h.add_immediate(0x800000, 1); });
    EXPECT_THAT(message, HasSubstr("0x800000"));
    EXPECT_THAT(message, HasSubstr("SPEAD-64-40"));
    EXPECT_THAT(message, HasSubstr("0x7fffff"));
    EXPECT_NO_THROW(h.add_immediate(0x7fffff, 1));
}

TEST(send_heap, rejects_immediate_value_wider_than_heap_address_bits)
{
    send::heap h40(flavour(40));
    EXPECT_THROW(h40.add_immediate(0x1000, std::uint64_t(1) << 40),
                 std::invalid_argument);
    EXPECT_NO_THROW(h40.add_immediate(0x1000, (std::uint64_t(1) << 40) - 1));
    send::heap h48(flavour(48));
    EXPECT_NO_THROW(h48.add_immediate(0x1000, std::uint64_t(1) << 40));
}

TEST(send_heap, rejects_missing_data_pointer)
{
    send::heap h;
    EXPECT_THROW(h.add_item(0x1000, nullptr, 4), std::invalid_argument);
    EXPECT_NO_THROW(h.add_item(0x1000, nullptr, 0));
}

TEST(send_heap, keeps_items_in_the_order_added)
{
    send::heap h;
    const std::uint8_t data[16] = {};
    h.add_item(0x1002, data, sizeof(data));
    h.add_immediate(0x1001, 7);
    h.add_item(0x1000, data, 2, false);
    ASSERT_EQ(h.items().size(), 3u);
    EXPECT_EQ(h.items()[0].id, 0x1002u);
    EXPECT_EQ(h.items()[0].data, data);
    EXPECT_EQ(h.items()[0].length, 16u);
    EXPECT_EQ(h.items()[1].id, 0x1001u);
    EXPECT_TRUE(h.items()[1].is_inline);
    EXPECT_EQ(h.items()[1].inline_value, 7u);
    EXPECT_EQ(h.items()[2].id, 0x1000u);
    EXPECT_FALSE(h.items()[2].allow_immediate);
}

TEST(send_heap, owned_values_outlive_the_callers_vector)
{
    send::heap h;
    {
        std::vector<std::uint8_t> value = { 1, 2, 3, 4, 5, 6, 7, 8 };
        h.add_item(0x1000, value);
    }
    for (int i = 0; i < 100; i++) // more owned values must not move the first
        h.add_item(0x1001, std::vector<std::uint8_t>(64, std::uint8_t(i)));
    const auto& first = h.items()[0];
    EXPECT_EQ(std::vector<std::uint8_t>(first.data, first.data + first.length),
              (std::vector<std::uint8_t>{ 1, 2, 3, 4, 5, 6, 7, 8 }));
}

TEST(send_heap, add_descriptor_adds_the_encoded_descriptor_as_item_5)
{
    send::heap h(flavour(48));
    descriptor d;
    d.id = 0x1000;
    d.name = "x";
    h.add_descriptor(d);
    ASSERT_EQ(h.items().size(), 1u);
    const auto& it = h.items()[0];
    EXPECT_EQ(it.id, item_id::descriptor);
    EXPECT_FALSE(it.allow_immediate);
    EXPECT_EQ(std::vector<std::uint8_t>(it.data, it.data + it.length),
              encode_descriptor(d, flavour(48)));
}

TEST(send_heap, add_start_and_add_end_are_stream_control_immediates)
{
    send::heap h;
    h.add_start();
    h.add_end();
    ASSERT_EQ(h.items().size(), 2u);
    EXPECT_EQ(h.items()[0].id, item_id::stream_ctrl);
    EXPECT_TRUE(h.items()[0].is_inline);
    EXPECT_EQ(h.items()[0].inline_value, stream_ctrl::start);
    EXPECT_EQ(h.items()[1].inline_value, stream_ctrl::stop);
}
