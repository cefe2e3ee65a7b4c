/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// read_endpoint_argument(): the forms spead_recv, spead_send and the blocks take, as
// one table (tests/apps/test_spead_edges.py runs the tools on the same forms). What the
// addresses hold (ranges, ports, names) is parse_endpoints()'s: test_endpoint.cc.

#include "transport/endpoint_argument.h"
#include <gtest/gtest.h>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace {

using namespace gr::spead::transport;

constexpr auto receive = endpoint_use::receive;
constexpr auto send = endpoint_use::send;

struct row {
    const char* text;
    endpoint_use use;
    endpoint_form form;
    const char* as; //!< the text the configs get; nullptr: an error containing `error`
    const char* error = nullptr;
};

TEST(EndpointArgument, TheFormsEveryToolAndBlockTakes)
{
    const char* existing = "endpoint_argument_test_capture";
    std::ofstream(existing) << "x";
    const std::vector<row> table = {
        { "127.0.0.1:7148", receive, endpoint_form::addresses, "127.0.0.1:7148" },
        { "239.1.2.3+3:7148", receive, endpoint_form::addresses, "239.1.2.3+3:7148" },
        { "239.1.2.3+3:7148", send, endpoint_form::addresses, "239.1.2.3+3:7148" },
        { "239.1.2.3+3:7148,239.1.3.1+1:7149",
          receive,
          endpoint_form::addresses,
          "239.1.2.3+3:7148,239.1.3.1+1:7149" },
        { ":7148", receive, endpoint_form::addresses, ":7148" },
        { "7148", receive, endpoint_form::addresses, ":7148" },
        { "7148, 239.1.2.3:7149",
          receive,
          endpoint_form::addresses,
          ":7148,239.1.2.3:7149" },
        { "[::1]:7148", receive, endpoint_form::addresses, "[::1]:7148" },
        { "ff14::1:7148", send, endpoint_form::addresses, "ff14::1:7148" },
        { "[ff14::1]+3:7148", receive, endpoint_form::addresses, "[ff14::1]+3:7148" },
        { "localhost:7148", send, endpoint_form::addresses, "localhost:7148" },
        { "verbs://:7150", receive, endpoint_form::verbs, "verbs://:7150" },
        { "verbs://10.0.0.2:7150", send, endpoint_form::verbs, "verbs://10.0.0.2:7150" },
        { "verbs://a:7150,verbs://b:7150",
          send,
          endpoint_form::verbs,
          "verbs://a:7150,verbs://b:7150" },
        { "heaps.pcap", receive, endpoint_form::capture_file, "heaps.pcap" },
        { "out.pcapng", send, endpoint_form::capture_file, "out.pcapng" },
        { existing, receive, endpoint_form::capture_file, existing },
        // Errors name the parameter, the value and the fix.
        { "239.1.2.3",
          receive,
          {},
          nullptr,
          "write 239.1.2.3:PORT, e.g. 239.1.2.3:7148" },
        { "239.1.2.3+3", receive, {}, nullptr, "e.g. 239.1.2.3+3:7148" },
        { "10.0.0.2", send, {}, nullptr, "10.0.0.2:7148" },
        { "7148", send, {}, nullptr, "names no host; write HOST:7148" },
        { "verbs://:7150", send, {}, nullptr, "names no host" },
        { "verbs://10.0.0.2", receive, {}, nullptr, "has no port" },
        { "no-such-file", receive, {}, nullptr, "neither an endpoint" },
        { "127.0.0.1:7148,verbs://:7150", receive, {}, nullptr, "give one kind" },
        { "a.pcap,b.pcap", receive, {}, nullptr, "give one kind" },
    };
    for (const row& r : table) {
        const std::string what =
            std::string(r.text) + (r.use == receive ? " (receive)" : " (send)");
        if (r.as) {
            const endpoint_argument a = read_endpoint_argument(r.text, "SOURCE", r.use);
            EXPECT_EQ(a.form, r.form) << what;
            EXPECT_EQ(a.text, r.as) << what;
            continue;
        }
        try {
            read_endpoint_argument(r.text, "SOURCE", r.use);
            ADD_FAILURE() << what << ": no error";
        } catch (const std::invalid_argument& e) {
            const std::string message = e.what();
            EXPECT_EQ(message.rfind("SOURCE: ", 0), 0u) << message;
            EXPECT_NE(message.find(r.error), std::string::npos)
                << what << ": " << message;
        }
    }
    std::remove(existing);
}

} // namespace
