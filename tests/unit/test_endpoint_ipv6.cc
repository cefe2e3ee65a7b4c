/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// IPv6 endpoints as spead2 writes them (transport/endpoint.h, ip_family::ipv4_or_ipv6),
// and their refusal where a transport is IPv4 only (ibverbs, captures).

#include "error_message.h"
#include "transport/endpoint.h"
#include <gtest/gtest.h>
#include <net/if.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace gr::spead::transport;
using boost::asio::ip::udp;

udp::endpoint ep6(const char* address, unsigned short port)
{
    return udp::endpoint(boost::asio::ip::make_address_v6(address), port);
}

std::vector<udp::endpoint> parse6(const std::string& text,
                                  endpoint_use use = endpoint_use::receive)
{
    return parse_endpoints(text, "endpoints", use, ip_family::ipv4_or_ipv6);
}

/*! The error names the parameter, quotes the entry, says the problem and shows the
 * syntax, with its IPv6 forms. */
void expect_error6(const std::string& text,
                   const std::string& problem,
                   endpoint_use use = endpoint_use::receive)
{
    const std::string message = spead_test::expect_error<std::invalid_argument>(
        [&] { parse6(text, use); }, "\"" + text + "\"");
    EXPECT_EQ(message.rfind("endpoints: ", 0), 0u) << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
    EXPECT_NE(message.find("[::1]:7148"), std::string::npos) << message;
}

TEST(ParseEndpointsIpv6, BracketedAndBareLiterals)
{
    EXPECT_EQ(parse6("[::1]:7148"), (std::vector<udp::endpoint>{ ep6("::1", 7148) }));
    // Without brackets the last colon starts the port, as in spead2.
    EXPECT_EQ(parse6("ff14::1:7148"),
              (std::vector<udp::endpoint>{ ep6("ff14::1", 7148) }));
    EXPECT_EQ(parse6(" [ff14::1] : 7148 , 239.1.2.3:7148"),
              (std::vector<udp::endpoint>{
                  ep6("ff14::1", 7148),
                  udp::endpoint(boost::asio::ip::make_address_v4("239.1.2.3"), 7148) }));
}

TEST(ParseEndpointsIpv6, EveryLocalAddressOnlyToReceive)
{
    EXPECT_EQ(parse6("[::]:7148"), (std::vector<udp::endpoint>{ ep6("::", 7148) }));
    expect_error6("[::]:7148", "no destination address", endpoint_use::send);
    expect_error6("[::]+1:7148", "range of ::");
}

TEST(ParseEndpointsIpv6, RangesCountInTheLowBitsAndCarry)
{
    EXPECT_EQ(parse6("[ff14::fffe]+3:9"),
              (std::vector<udp::endpoint>{ ep6("ff14::fffe", 9),
                                           ep6("ff14::ffff", 9),
                                           ep6("ff14::1:0", 9),
                                           ep6("ff14::1:1", 9) }));
    EXPECT_EQ(parse6("ff14::1+1:9").size(), 2u);
    expect_error6("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe]+2:9", "runs past");
    expect_error6("[feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]+1:9",
                  "crosses the edge of the multicast range");
}

TEST(ParseEndpointsIpv6, AScopeIdByNameOrNumberIsKept)
{
    const auto by_name = parse6("[fe80::1%lo]:7148");
    ASSERT_EQ(by_name.size(), 1u);
    EXPECT_EQ(by_name[0].address().to_v6().scope_id(), if_nametoindex("lo"));
    const auto by_number = parse6("[fe80::1%1]+1:7148");
    ASSERT_EQ(by_number.size(), 2u);
    EXPECT_EQ(by_number[1].address().to_v6().scope_id(), 1u);
}

TEST(ParseEndpointsIpv6, MalformedEntriesSayWhatIsWrong)
{
    expect_error6("[::1:7148", "without its ']'");
    expect_error6("[::1]", "no port");
    expect_error6("[::1]x:7148", "between ']' and the port");
    expect_error6("[]:7148", "nothing between");
    expect_error6("[::1]:0", "bad port");
    expect_error6("[::1]:70000", "bad port");
    expect_error6("[::1]+x:7148", "bad range count");
    expect_error6("[fe80::g]:7148", "bad IPv6 address");
    expect_error6("::1", "bad IPv6 address"); // the port took the 1
}

TEST(ParseEndpointsIpv6, AnIpv4OnlyTransportRefusesNamingTheFix)
{
    const std::string message = spead_test::expect_error<std::invalid_argument>(
        [] {
            parse_endpoints("[::1]:7148",
                            "endpoints",
                            endpoint_use::send,
                            ip_family::ipv4,
                            "use the kernel UDP transport");
        },
        "[::1]:7148 with ip_family::ipv4");
    EXPECT_NE(message.find("endpoints: \"[::1]:7148\" is IPv6"), std::string::npos)
        << message;
    EXPECT_NE(message.find("use the kernel UDP transport"), std::string::npos) << message;
    // The default (IPv4 only) as before, for every existing caller.
    EXPECT_THROW(parse_endpoints("ff14::1:7148", "endpoints", endpoint_use::receive),
                 std::invalid_argument);
    EXPECT_THROW(check_endpoint(ep6("::1", 7148), "endpoints", endpoint_use::receive),
                 std::invalid_argument);
    EXPECT_NO_THROW(check_endpoint(
        ep6("::1", 7148), "endpoints", endpoint_use::send, ip_family::ipv4_or_ipv6));
    EXPECT_THROW(
        check_endpoint(
            ep6("::", 7148), "endpoints", endpoint_use::send, ip_family::ipv4_or_ipv6),
        std::invalid_argument);
}

TEST(ParseEndpointsIpv6, ToStringBracketsIpv6)
{
    EXPECT_EQ(
        to_string({ ep6("ff14::1", 7148),
                    udp::endpoint(boost::asio::ip::make_address_v4("10.0.0.1"), 9) }),
        "[ff14::1]:7148,10.0.0.1:9");
}

} // namespace
