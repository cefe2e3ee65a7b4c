/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Local interfaces as users name them (transport/network_interface.h).

#include "error_message.h"
#include "transport/network_interface.h"
#include <gtest/gtest.h>
#include <net/if.h>
#include <stdexcept>
#include <string>

namespace {

using namespace gr::spead::transport;
using boost::asio::ip::address_v4;

TEST(ResolveInterface, ByName)
{
    const network_interface lo = resolve_interface("lo", "interface");
    EXPECT_EQ(lo.name, "lo");
    EXPECT_EQ(lo.address, address_v4::loopback());
    EXPECT_EQ(lo.index, if_nametoindex("lo"));
}

TEST(ResolveInterface, ByAddress)
{
    const network_interface lo = resolve_interface("127.0.0.1", "interface");
    EXPECT_EQ(lo.name, "lo");
    EXPECT_EQ(lo.index, if_nametoindex("lo"));
}

std::string interface_error(const std::string& text)
{
    return spead_test::expect_error<std::invalid_argument>(
        [&] { resolve_interface(text, "interface"); }, text);
}

TEST(ResolveInterface, UnknownNameListsTheInterfacesThereAre)
{
    const std::string message = interface_error("nosuchif0");
    EXPECT_EQ(message.rfind("interface: \"nosuchif0\" is not a local interface", 0), 0u)
        << message;
    EXPECT_NE(message.find("lo (127.0.0.1)"), std::string::npos) << message;
}

TEST(ResolveInterface, AddressOfNoLocalInterface)
{
    const std::string message = interface_error("203.0.113.77");
    EXPECT_NE(message.find("is not the address of a local interface"), std::string::npos)
        << message;
}

TEST(ResolveInterface, Empty)
{
    EXPECT_EQ(interface_error("").rfind("interface: empty", 0), 0u);
}

TEST(InterfaceMtu, Loopback) { EXPECT_GE(interface_mtu("lo"), 1500); }

TEST(InterfaceIndex, ByNameIndexOrAddress)
{
    const unsigned int lo = if_nametoindex("lo");
    ASSERT_NE(lo, 0u);
    EXPECT_EQ(interface_index("lo", "interface"), lo);
    EXPECT_EQ(interface_index(std::to_string(lo), "interface"), lo);
    EXPECT_EQ(interface_index("127.0.0.1", "interface"), lo);
    const std::string message = spead_test::expect_error<std::invalid_argument>(
        [] { interface_index("no-such-if0", "interface"); }, "no-such-if0");
    EXPECT_EQ(message.rfind("interface: \"no-such-if0\"", 0), 0u) << message;
    EXPECT_NE(message.find("lo ("), std::string::npos) << message;
}

} // namespace
