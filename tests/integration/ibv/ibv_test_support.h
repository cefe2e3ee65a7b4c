/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What the ibverbs integration tests share: the hosts of the namespace topology they
// run in (tests/netns/netns-topology exports TOPO_*), moving a thread between hosts,
// running this test binary again as a child process (with fewer capabilities or
// another environment), the configs and checks the tests of the reader, the stream
// and the round trip all use, and heaps whose bytes can be checked exactly.

#ifndef INCLUDED_SPEAD_TESTS_IBV_TEST_SUPPORT_H
#define INCLUDED_SPEAD_TESTS_IBV_TEST_SUPPORT_H

#include "error_message.h"
#include <gnuradio/spead/recv_heap.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ibv_test {

/*! Host i of the topology: TOPO_NS_i, TOPO_IF_i, TOPO_IP_i, TOPO_MAC_i. */
struct topology_host {
    std::string ns;
    std::string netdev;
    std::string ip;
    std::string mac;
};

/*! True when the process runs under netns-topology with at least \p hosts hosts. */
bool have_topology(int hosts);
topology_host host(int i);
/*! "<host i's IPv4 address>:<port>", as the endpoint options take it. */
std::string endpoint_in(int i, unsigned short port);

/*!
 * Moves the calling thread into host \p i's network namespace for its scope. Sockets,
 * QPs and threads created meanwhile stay in that namespace; the thread goes back to
 * where it was at the end. (Network namespaces are per thread.)
 */
class in_host
{
public:
    explicit in_host(int i);
    ~in_host();
    in_host(const in_host&) = delete;
    in_host& operator=(const in_host&) = delete;

private:
    int d_previous;
};

/*! Moves the whole (still single-threaded) process into host \p i: main() does this
 * for host 1, the sender. */
void enter_host(int i);

/*! A test program's main(): GoogleTest's, with the whole process in host \p i (when
 * the topology is there), where its threads and those it starts are born. */
int run_all_tests_in_host(int argc, char** argv, int i);

/*! What a child process printed and how it ended. */
struct child_result {
    int exit_code = -1; //!< -1 if it did not exit normally
    std::string output; //!< stdout and stderr
};

/*!
 * Runs this test binary again with \p gtest_filter, under \p prefix (e.g. setpriv
 * ...), with \p environment (NAME=VALUE) added, and IBV_TEST_CHILD=1 so that child-only
 * tests run. Bounded by \p timeout (the child is killed after it).
 */
child_result run_child(const std::vector<std::string>& prefix,
                       const std::string& gtest_filter,
                       const std::vector<std::string>& environment,
                       std::chrono::seconds timeout = std::chrono::seconds(30));
/*! True in a process started by run_child(). */
bool is_child();
/*! run_child() prefixes: without CAP_NET_RAW; with 64 KiB of memlock and without
 * CAP_IPC_LOCK (so the limit holds). */
std::vector<std::string> without_cap_net_raw();
std::vector<std::string> with_64k_memlock();
/*! The child side of the construction-error tests: runs \p build (a reader's or a
 * stream's constructor) and prints `BUILT`, `SYSTEM_ERROR <errno>: <what>` or
 * `OTHER_ERROR: <what>`. */
void print_build_outcome(const std::function<void()>& build);

/*! \p text has \p part in it. */
bool contains(const std::string& text, const std::string& part);
/*! Expects \p f to throw std::invalid_argument naming \p parameter (tests/common). */
using spead_test::expect_invalid;

/*! The port the tests send to unless they need another. */
constexpr unsigned short default_port = 7148;
/*! A reader in host 2 of \p endpoints (text form). */
gr::spead::recv::udp_ibv_config reader_config(const std::string& endpoints,
                                              int comp_vector = 0);
/*! A sender in host 1 to \p destination:\p port. */
gr::spead::send::udp_ibv_config sender_config(const std::string& destination,
                                              int comp_vector,
                                              unsigned short port = default_port);

/*! The item the tests' heaps carry their payload in. */
constexpr std::uint64_t payload_id = 0x1000;

/*! Payload byte \p i of heap \p cnt: differs per heap and per byte. */
inline std::uint8_t pattern_byte(std::uint64_t cnt, std::size_t i)
{
    return std::uint8_t((cnt * 131) ^ (i * 7) ^ (i >> 8));
}
void fill_pattern(std::uint8_t* out, std::size_t size, std::uint64_t cnt);
/*! \p size bytes of heap \p cnt's pattern. */
std::vector<std::uint8_t> patterned(std::size_t size, std::uint64_t cnt);

/*! Mismatching bytes of item \p id of \p h against fill_pattern(size, cnt), or
 * SIZE_MAX if the item is missing or has another length. */
std::size_t pattern_mismatches(const gr::spead::recv::heap& h,
                               std::uint64_t id,
                               std::size_t size,
                               std::uint64_t cnt);

/*! Verbs objects (PDs, channels, CQs, QPs, MRs, flows, counters) that exist now on
 * the emulated device owning \p interface_ip, summed: 0 once everything is released.
 * Fails the test on the real rdma-core, which cannot tell. */
int live_verbs_objects(const std::string& interface_ip);

/*! An rdma_cm_id bound to \p interface_ip, as the transport binds one: rdma_cm gives
 * every id of a device the same context, so context() is the reader's or stream's. */
class bound_cm_id
{
public:
    /*! \throws std::system_error when rdma_cm cannot bind there */
    explicit bound_cm_id(const std::string& interface_ip);
    ~bound_cm_id();
    bound_cm_id(const bound_cm_id&) = delete;
    bound_cm_id& operator=(const bound_cm_id&) = delete;
    ibv_context* context() const;

private:
    rdma_cm_id* d_id = nullptr;
};

/*! Open file descriptors and threads of this process. */
std::size_t count_open_fds();
std::size_t count_threads();

/*! Polls \p done every millisecond for at most \p limit. */
bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit);

} // namespace ibv_test

/*! Skips a test run outside its two-host topology (ctest provides it). */
#define REQUIRE_TOPOLOGY()                                                        \
    do {                                                                          \
        if (!ibv_test::have_topology(2))                                          \
            GTEST_SKIP() << "needs tests/netns/netns-topology --hosts 2 and the " \
                            "emulated NIC (run through ctest)";                   \
    } while (0)

#endif
