/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Endpoint lists as users write them (transport/endpoint.h).

#include "error_message.h"
#include "transport/endpoint.h"
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace {

using namespace gr::spead::transport;
using boost::asio::ip::udp;

udp::endpoint ep(const char* address, unsigned short port)
{
    return udp::endpoint(boost::asio::ip::make_address_v4(address), port);
}

using endpoints = std::vector<udp::endpoint>;

/*! \p text parsed as the `endpoints` parameter, for \p use. */
endpoints parsed(const std::string& text, endpoint_use use = endpoint_use::send)
{
    return parse_endpoints(text, "endpoints", use);
}

/*! The message of the std::invalid_argument that parsing \p text throws. */
std::string parse_error(const std::string& text, endpoint_use use = endpoint_use::receive)
{
    return spead_test::expect_error<std::invalid_argument>(
        [&] { parse_endpoints(text, "endpoints", use); }, "\"" + text + "\"");
}

/*! Every error names the parameter, quotes the bad value and shows the syntax. */
void expect_error(const std::string& text,
                  const std::string& quoted,
                  const std::string& problem,
                  endpoint_use use = endpoint_use::receive)
{
    const std::string message = parse_error(text, use);
    EXPECT_EQ(message.rfind("endpoints: ", 0), 0u) << message;
    EXPECT_NE(message.find("\"" + quoted + "\""), std::string::npos) << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
    EXPECT_NE(message.find("expected ADDRESS[+COUNT]:PORT"), std::string::npos)
        << message;
}

// ---- accepted syntax -----------------------------------------------------------

TEST(ParseEndpoints, AList)
{
    EXPECT_EQ(parsed("239.1.2.3:7148,239.1.2.4:7149", endpoint_use::receive),
              (endpoints{ ep("239.1.2.3", 7148), ep("239.1.2.4", 7149) }));
}

TEST(ParseEndpoints, ARangeIsTheAddressAndTheNextCount)
{
    EXPECT_EQ(parsed("239.1.2.3+3:7148"),
              (endpoints{ ep("239.1.2.3", 7148),
                          ep("239.1.2.4", 7148),
                          ep("239.1.2.5", 7148),
                          ep("239.1.2.6", 7148) }));
}

TEST(ParseEndpoints, ARangeCarriesAcrossOctets)
{
    EXPECT_EQ(parsed("10.0.0.255+1:9"),
              (endpoints{ ep("10.0.0.255", 9), ep("10.0.1.0", 9) }));
}

TEST(ParseEndpoints, ARangeOfZeroIsOneAddress)
{
    EXPECT_EQ(parsed("239.1.2.3+0:7148"), (endpoints{ ep("239.1.2.3", 7148) }));
}

TEST(ParseEndpoints, RangesAndSinglesMix)
{
    EXPECT_EQ(
        parsed("239.1.2.3+1:7148, 10.0.0.1:1"),
        (endpoints{ ep("239.1.2.3", 7148), ep("239.1.2.4", 7148), ep("10.0.0.1", 1) }));
}

TEST(ParseEndpoints, AnyAddressToReceive)
{
    EXPECT_EQ(parsed("0.0.0.0:7148", endpoint_use::receive),
              (endpoints{ ep("0.0.0.0", 7148) }));
    EXPECT_EQ(parsed(":7148", endpoint_use::receive), (endpoints{ ep("0.0.0.0", 7148) }));
}

TEST(ParseEndpoints, WhitespaceAroundEntriesIsIgnored)
{
    EXPECT_EQ(parsed("  239.1.2.3:7148 ,\t239.1.2.4 : 7148 ", endpoint_use::receive),
              (endpoints{ ep("239.1.2.3", 7148), ep("239.1.2.4", 7148) }));
}

TEST(ParseEndpoints, PortExtremes)
{
    EXPECT_EQ(parsed("1.2.3.4:1,1.2.3.4:65535"),
              (endpoints{ ep("1.2.3.4", 1), ep("1.2.3.4", 65535) }));
}

TEST(ParseEndpoints, HostnamesResolveToIPv4)
{
    EXPECT_EQ(parsed("localhost:7148"), (endpoints{ ep("127.0.0.1", 7148) }));
}

TEST(ParseEndpoints, TheLargestRange)
{
    const auto list = parsed("239.0.0.0+" + std::to_string(max_range_count) + ":7148");
    ASSERT_EQ(list.size(), max_range_count + 1);
    EXPECT_EQ(list.back(), ep("239.0.3.255", 7148));
}

// ---- errors ----------------------------------------------------------------------

TEST(ParseEndpointsErrors, EmptyList) { expect_error("  ", "  ", "is empty"); }

TEST(ParseEndpointsErrors, EmptyEntry)
{
    expect_error("239.1.2.3:7148,,239.1.2.4:7148",
                 "239.1.2.3:7148,,239.1.2.4:7148",
                 "empty entry");
    expect_error("239.1.2.3:7148,", "239.1.2.3:7148,", "empty entry");
}

TEST(ParseEndpointsErrors, MissingPort)
{
    expect_error("239.1.2.3", "239.1.2.3", "no port");
}

TEST(ParseEndpointsErrors, BadPorts)
{
    expect_error("239.1.2.3:0", "239.1.2.3:0", "bad port \"0\"");
    expect_error("239.1.2.3:65536", "239.1.2.3:65536", "bad port \"65536\"");
    expect_error("239.1.2.3:http", "239.1.2.3:http", "bad port \"http\"");
    expect_error("239.1.2.3:", "239.1.2.3:", "bad port \"\"");
    expect_error("239.1.2.3:-1", "239.1.2.3:-1", "bad port \"-1\"");
}

TEST(ParseEndpointsErrors, BadAddresses)
{
    expect_error(
        "239.1.2.300:7148", "239.1.2.300:7148", "bad IPv4 address \"239.1.2.300\"");
    expect_error("239.1.2:7148", "239.1.2:7148", "bad IPv4 address");
    expect_error("bad_host!:7148", "bad_host!:7148", "bad IPv4 address");
}

TEST(ParseEndpointsErrors, BadRangeCounts)
{
    expect_error("239.1.2.3+:7148", "239.1.2.3+:7148", "bad range count \"\"");
    expect_error("239.1.2.3+x:7148", "239.1.2.3+x:7148", "bad range count \"x\"");
    expect_error("239.1.2.3+-1:7148", "239.1.2.3+-1:7148", "bad range count");
    expect_error(
        "239.1.2.3+1024:7148", "239.1.2.3+1024:7148", "bad range count \"1024\"");
}

TEST(ParseEndpointsErrors, RangePastTheLastAddress)
{
    expect_error("255.255.255.254+2:7148",
                 "255.255.255.254+2:7148",
                 "runs past 255.255.255.255",
                 endpoint_use::send);
}

TEST(ParseEndpointsErrors, RangesStayOnOneSideOfTheMulticastEdge)
{
    expect_error("239.255.255.255+5:7148",
                 "239.255.255.255+5:7148",
                 "from 239.255.255.255 to 240.0.0.4 that crosses the edge of the "
                 "multicast range",
                 endpoint_use::send);
    expect_error("223.255.255.254+3:7148",
                 "223.255.255.254+3:7148",
                 "crosses the edge of the multicast range",
                 endpoint_use::receive);
    // Up to the edge is fine on both sides.
    EXPECT_EQ(parsed("239.255.255.250+5:7148").size(), 6u);
    EXPECT_EQ(parsed("223.255.255.250+5:7148").size(), 6u);
}

TEST(ParseEndpointsErrors, BroadcastAndReservedAddresses)
{
    for (endpoint_use use : { endpoint_use::send, endpoint_use::receive }) {
        expect_error("255.255.255.255:7148",
                     "255.255.255.255:7148",
                     "includes 255.255.255.255, the broadcast address",
                     use);
        expect_error("255.255.255.250+5:7148",
                     "255.255.255.250+5:7148",
                     "the broadcast address",
                     use);
        expect_error(
            "240.0.0.1:7148", "240.0.0.1:7148", "240.0.0.1, a reserved address", use);
    }
}

TEST(ParseEndpointsErrors, RangeOnAHostname)
{
    expect_error("localhost+1:7148", "localhost+1:7148", "range on a hostname");
}

TEST(ParseEndpointsErrors, RangeOfAnyAddress)
{
    expect_error("0.0.0.0+1:7148", "0.0.0.0+1:7148", "range of 0.0.0.0");
}

TEST(ParseEndpointsErrors, UnresolvableHostname)
{
    expect_error(
        "no-such-host.invalid:7148", "no-such-host.invalid:7148", "does not resolve");
}

TEST(ParseEndpointsErrors, SendersNeedADestination)
{
    expect_error(":7148", ":7148", "no destination address", endpoint_use::send);
    expect_error(
        "0.0.0.0:7148", "0.0.0.0:7148", "no destination address", endpoint_use::send);
}

TEST(ParseEndpointsErrors, TheParameterNameIsTheCallersOwn)
{
    try {
        parse_endpoints("x", "destinations", endpoint_use::send);
        ADD_FAILURE();
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("destinations: \"x\"", 0), 0u) << e.what();
    }
}

TEST(CheckEndpoint, RejectsWhatTextWouldNotGive)
{
    EXPECT_NO_THROW(
        check_endpoint(ep("239.1.2.3", 7148), "endpoints", endpoint_use::send));
    EXPECT_NO_THROW(
        check_endpoint(ep("0.0.0.0", 7148), "endpoints", endpoint_use::receive));
    EXPECT_THROW(check_endpoint(ep("239.1.2.3", 0), "endpoints", endpoint_use::send),
                 std::invalid_argument);
    EXPECT_THROW(check_endpoint(ep("0.0.0.0", 7148), "endpoints", endpoint_use::send),
                 std::invalid_argument);
    EXPECT_THROW(
        check_endpoint(ep("255.255.255.255", 7148), "endpoints", endpoint_use::send),
        std::invalid_argument);
    EXPECT_THROW(
        check_endpoint(ep("250.1.2.3", 7148), "endpoints", endpoint_use::receive),
        std::invalid_argument);
    EXPECT_THROW(check_endpoint(udp::endpoint(boost::asio::ip::make_address("::1"), 7148),
                                "endpoints",
                                endpoint_use::receive),
                 std::invalid_argument);
}

TEST(EndpointHelpers, ToStringAndSockaddr)
{
    EXPECT_EQ(to_string({ ep("239.1.2.3", 7148), ep("10.0.0.1", 1) }),
              "239.1.2.3:7148,10.0.0.1:1");
    const sockaddr_in sa = to_sockaddr(ep("10.1.2.3", 0x1234));
    EXPECT_EQ(sa.sin_family, AF_INET);
    EXPECT_EQ(sa.sin_port, htons(0x1234));
    EXPECT_EQ(sa.sin_addr.s_addr, htonl(0x0a010203));
}

} // namespace
