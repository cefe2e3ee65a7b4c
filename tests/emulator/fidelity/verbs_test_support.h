/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What the fidelity tests share: a private network namespace with loopback up (set up
// once per test process), small RAII owners for verbs objects, and frame/traffic
// helpers. Tests use the plain verbs API, as an application on real hardware would; the
// only emulator-specific call is reading its drop counters (spead_emu/extensions.h).
#ifndef SPEAD_EMU_VERBS_TEST_SUPPORT_H
#define SPEAD_EMU_VERBS_TEST_SUPPORT_H

#include <spead_emu/extensions.h>
#include <verbs_builders.h>
#include <verbs_owners.h>

#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace verbs_test {

using namespace verbs_builders;
using namespace verbs_owners;

// --- the private namespace ----------------------------------------------------------
// Registers the global environment: unshare(CLONE_NEWNET), loopback up, route_localnet
// and accept_local on (raw frames to 127.0.0.1 are martians otherwise), offloads off,
// SPEAD_EMU_NETDEVS=lo. Call from main() before RUN_ALL_TESTS.
void install_private_loopback_environment();

// Emulator extension functions (found with dlsym).
spead_emu_api& emulator();

// Interface helpers inside the private namespace.
void set_loopback_mtu(int mtu);
// Runs a shell command (ip, sysctl) in the test's namespace; fails the test if it fails.
void run_command(const std::string& command);

// --- opening the emulated loopback device ------------------------------------------
context_ptr open_loopback_device();

// ibv_query_device_ex's answer (a failure fails the test).
ibv_device_attr_ex query_device_ex(ibv_context* context);

// What a test's QP on the loopback device is made of.
struct queue_pair_parts {
    context_ptr context;
    pd_ptr pd;
    channel_ptr channel; // only when asked for
    cq_ptr send_cq;
    cq_ptr receive_cq;
    qp_ptr qp;
};
// Opens the loopback device into \p made and makes its PD, two CQs of \p cq_entries
// (the receive CQ on a completion channel when \p with_channel) and a QP of \p type
// with \p cap. A QP the emulator refuses fails the test (the other parts are checked
// by their users).
void make_queue_pair_parts(queue_pair_parts& made,
                           int cq_entries,
                           bool with_channel,
                           ibv_qp_type type,
                           const ibv_qp_cap& cap,
                           bool signal_all = false);

// A receive or send QP on the loopback device, with everything it needs.
struct raw_queue_pair : queue_pair_parts {
    flow_ptr flow; // when the test steers traffic here; destroyed before the QP
};
struct queue_pair_options {
    uint32_t send_wr = 16;
    uint32_t receive_wr = 16;
    uint32_t send_sge = 2;
    uint32_t receive_sge = 1;
    int cq_entries = 64;
    bool with_channel = false;
    uint32_t inline_data = 0;
};
raw_queue_pair make_raw_queue_pair(const queue_pair_options& options = {});

// 0, or the errno of the first failing ibv_modify_qp.
int move_to_init(ibv_qp* qp);
int move_to_rtr(ibv_qp* qp);
int move_to_rts(ibv_qp* qp);
// RESET -> ... -> the state named.
void bring_up(ibv_qp* qp, ibv_qp_state state);
ibv_qp_state current_state(ibv_qp* qp);

// --- flows ----------------------------------------------------------------------------
// udp_flow_rule and make_udp_flow_rule() come from verbs_builders.h.
// Steers loopback frames to 127.0.0.1:port into the QP.
flow_ptr steer_loopback_udp(ibv_qp* qp, uint16_t port);
// A QP at RTR that receives the loopback frames to 127.0.0.1:port (its flow in .flow).
raw_queue_pair make_loopback_receiver(uint16_t port,
                                      const queue_pair_options& options = {});

// --- traffic --------------------------------------------------------------------------
// Sends one datagram from a kernel UDP socket to address:port (host byte order port).
void send_kernel_datagram(const std::string& payload,
                          uint16_t port,
                          const char* address = "127.0.0.1");

// An Ethernet/IPv4/UDP frame between loopback addresses, IPv4 checksum left zero.
std::vector<uint8_t> make_loopback_udp_frame(uint16_t port, const std::string& payload);
constexpr size_t udp_frame_overhead = 14 + 20 + 8;

// A receive buffer with its MR.
struct registered_buffer {
    std::vector<uint8_t> bytes;
    mr_ptr mr;
    ibv_sge sge(size_t offset = 0, uint32_t length = 0) const; // whole buffer when 0
};
registered_buffer
register_buffer(ibv_pd* pd, size_t size, int access = IBV_ACCESS_LOCAL_WRITE);

int post_one_receive(ibv_qp* qp, uint64_t wr_id, const ibv_sge& sge);

// Polls until `wanted` completions arrived or the time is up (bounded either way).
std::vector<ibv_wc> poll_completions(
    ibv_cq* cq, size_t wanted, std::chrono::milliseconds limit = std::chrono::seconds(3));

// A kernel UDP socket bound to 127.0.0.1:port that a test reads datagrams from.
class kernel_udp_receiver
{
public:
    explicit kernel_udp_receiver(uint16_t port, const char* address = "127.0.0.1");
    ~kernel_udp_receiver();
    // The next datagram, or nothing after the time limit.
    bool receive(std::string& payload,
                 std::chrono::milliseconds limit = std::chrono::seconds(3));

private:
    int m_fd;
};

} // namespace verbs_test

#endif
