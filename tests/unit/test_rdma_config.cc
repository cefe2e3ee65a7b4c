/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The rdma transport's configs: verbs:// URIs, validation naming the parameter, the
// value and the fix, and the GR_SPEAD_RDMA_* environment overrides.

#include "transport/rdma/rdma_link.h"
#include "transport/rdma/rdma_uri.h"
#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/send_rdma.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <cstdlib>
#include <stdexcept>
#include <string>

using namespace gr::spead;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {
std::string message_of(void (*f)())
{
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no exception)";
}

/*! Sets an environment variable for one scope. */
struct scoped_env {
    scoped_env(const char* name, const char* value) : name(name)
    {
        setenv(name, value, 1);
    }
    ~scoped_env() { unsetenv(name); }
    const char* name;
};
} // namespace

TEST(RdmaUri, ParsesHostAndPort)
{
    auto u = rdma::parse_uri("verbs://10.0.0.2:7150", "endpoint", false);
    EXPECT_EQ(u.host, "10.0.0.2");
    EXPECT_EQ(u.port, 7150);
    EXPECT_EQ(rdma::to_string(u), "verbs://10.0.0.2:7150");
    auto any = rdma::parse_uri("verbs://:7150", "endpoint", true);
    EXPECT_EQ(any.host, "");
    EXPECT_EQ(any.port, 7150);
}

TEST(RdmaUri, RefusesBadUris)
{
    for (const char* bad : { "10.0.0.2:7150",
                             "tcp://10.0.0.2:7150",
                             "verbs://10.0.0.2",
                             "verbs://10.0.0.2:0",
                             "verbs://10.0.0.2:65536",
                             "verbs://10.0.0.2:71x",
                             "verbs://10.0.0.2:",
                             "verbs://[::1]:7150",
                             "verbs://:7150" }) {
        try {
            rdma::parse_uri(bad, "endpoint", false);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_THAT(e.what(), HasSubstr("endpoint: \"" + std::string(bad) + "\""));
            EXPECT_THAT(e.what(), HasSubstr("verbs://HOST:PORT"));
        }
    }
}

TEST(RdmaConfig, ReceiveDefaultsAndEndpoint)
{
    recv::rdma_config c;
    EXPECT_FALSE(c.has_endpoint());
    EXPECT_EQ(c.get_max_packet_size(), (std::size_t(1) << 20) + 4096);
    c.set_endpoint("verbs://:7150");
    EXPECT_TRUE(c.has_endpoint());
    EXPECT_EQ(c.get_host(), "");
    c.set_endpoint("verbs://localhost:7151");
    EXPECT_EQ(c.get_host(), "localhost");
    EXPECT_EQ(c.get_port(), 7151);
}

TEST(RdmaConfig, SendEndpointMustResolve)
{
    EXPECT_THAT(message_of([] {
                    send::rdma_config().set_endpoint("verbs://no-such-host.invalid:7150");
                }),
                HasSubstr("does not resolve"));
    EXPECT_THAT(message_of([] { send::rdma_config().set_endpoint("verbs://:7150"); }),
                HasSubstr("names no host"));
    send::rdma_config c;
    c.set_endpoint("verbs://127.0.0.1:7150");
    EXPECT_EQ(c.get_port(), 7150);
}

TEST(RdmaConfig, SettersNameParameterValueAndFix)
{
    const std::pair<void (*)(), const char*> cases[] = {
        { [] { recv::rdma_config().set_max_packet_size(10); },
          "max_packet_size: 10 bytes is out of range" },
        { [] { recv::rdma_config().set_rdma_depth(5000); }, "rdma_depth: 5000" },
        { [] { recv::rdma_config().set_max_connections(0); }, "max_connections: 0" },
        { [] { recv::rdma_config().set_allowed_peers("10.0.0.0/99"); }, "allowed_peers" },
        { [] { send::rdma_config().set_inline_bytes(5000); }, "inline_bytes: 5000" },
        { [] { send::rdma_config().set_send_depth(0); }, "send_depth: 0" },
        { [] { recv::rdma_config().set_interface("nosuchif0"); }, "interface" },
    };
    for (const auto& [set, message] : cases)
        EXPECT_THAT(message_of(set), HasSubstr(message));
}

TEST(RdmaConfig, ValidateChecksSettingsTogether)
{
    EXPECT_THAT(message_of([] { recv::validate(recv::rdma_config()); }),
                HasSubstr("endpoint: none given"));
    EXPECT_THAT(message_of([] {
                    recv::validate(recv::rdma_config()
                                       .set_endpoint("verbs://:7150")
                                       .set_rdma_connections(2)
                                       .set_rdma_depth(0));
                }),
                HasSubstr("rdma_depth: 0 with rdma_connections 2"));
    EXPECT_THAT(message_of([] {
                    recv::validate(recv::rdma_config()
                                       .set_endpoint("verbs://:7150")
                                       .set_rdma_depth(32)
                                       .set_recv_depth(8));
                }),
                HasSubstr("recv_depth: 8 is below rdma_depth (32)"));
    // SendRecv only: rdma_depth 0 is fine.
    EXPECT_NO_THROW(recv::validate(recv::rdma_config()
                                       .set_endpoint("verbs://:7150")
                                       .set_rdma_connections(0)
                                       .set_rdma_depth(0)));
}

// Issue 38 item 4: the ring's size was cast to 32 bits unchecked (its offsets travel
// as 32-bit immediates): 4096 x 1 MiB granted a ring of 0 bytes.
TEST(RdmaConfig, ARingAbove4GiBIsRefusedNamingTheLimit)
{
    EXPECT_THAT(message_of([] {
                    recv::validate(recv::rdma_config()
                                       .set_endpoint("verbs://:7150")
                                       .set_max_packet_size(std::size_t(1) << 20)
                                       .set_rdma_depth(4096)
                                       .set_recv_depth(4096));
                }),
                AllOf(HasSubstr("rdma_depth: 4096"), HasSubstr("4294967295")));
    EXPECT_NO_THROW(recv::validate(recv::rdma_config()
                                       .set_endpoint("verbs://:7150")
                                       .set_max_packet_size(std::size_t(1) << 20)
                                       .set_rdma_depth(4095)
                                       .set_recv_depth(4096)));
}

TEST(RdmaConfig, EnvironmentOverrides)
{
    {
        scoped_env a("GR_SPEAD_RDMA_CONNECTIONS", "0");
        scoped_env b("GR_SPEAD_RDMA_DEPTH", "3");
        const auto c = recv::with_environment(recv::rdma_config());
        EXPECT_EQ(c.get_rdma_connections(), 0u);
        EXPECT_EQ(c.get_rdma_depth(), 3u);
    }
    {
        scoped_env a("GR_SPEAD_RDMA_INLINE_BYTES", "128");
        EXPECT_EQ(send::with_environment(send::rdma_config()).get_inline_bytes(), 128u);
    }
    {
        scoped_env a("GR_SPEAD_RDMA_DEPTH", "lots");
        EXPECT_THAT(message_of([] { recv::with_environment(recv::rdma_config()); }),
                    HasSubstr("GR_SPEAD_RDMA_DEPTH: 'lots'"));
    }
    {
        scoped_env a("GR_SPEAD_RDMA_INTERFACE", "nosuchif0");
        EXPECT_THAT(message_of([] { send::with_environment(send::rdma_config()); }),
                    HasSubstr("nosuchif0"));
    }
    // Unset: nothing changes.
    EXPECT_EQ(recv::with_environment(recv::rdma_config()).get_rdma_depth(),
              recv::rdma_config::default_rdma_depth);
}

TEST(RdmaConfig, MaxPacketSizeAboveTheDeviceLimitIsRefusedNamingBoth)
{
    EXPECT_NO_THROW(rdma::check_max_packet_size(1 << 20, 1u << 30));
    try {
        rdma::check_max_packet_size(std::size_t(1) << 30, 1u << 24);
        ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(),
                    HasSubstr("max_packet_size: 1073741824 bytes is above the "
                              "device's max message size (16777216)"));
    }
}
