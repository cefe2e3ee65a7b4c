/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What the RC fidelity tests share: two RC QPs on the emulated loopback device,
// connected to each other through the plain verbs API (INIT/RTR/RTS with the RoCE v2
// GID at index 0), as ibv_rc_pingpong connects its QPs.
#ifndef SPEAD_EMU_RC_TEST_SUPPORT_H
#define SPEAD_EMU_RC_TEST_SUPPORT_H

#include "verbs_test_support.h"

#include <cstdint>
#include <string>
#include <vector>

namespace verbs_test {

// An RC QP and what it is made of (no completion channel).
using rc_endpoint = queue_pair_parts;

struct rc_options {
    uint32_t send_wr = 32;
    uint32_t receive_wr = 32;
    uint32_t sge = 4;
    uint32_t inline_data = 0;
    bool signal_all = false;
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    uint8_t timeout = 12; // 16.8 ms
    uint8_t retry_cnt = 3;
    uint8_t rnr_retry = 7;
    uint8_t min_rnr_timer = 1; // 10 us
};

// An RC QP (in RESET) on the loopback device, with its own CQs of 256 entries.
rc_endpoint make_rc_endpoint(const rc_options& options = {});

// The attributes of each transition, as ibv_rc_pingpong sets them.
ibv_qp_attr init_attributes(const rc_options& options = {});
constexpr int init_mask =
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
ibv_qp_attr rtr_attributes(const ibv_gid& dgid,
                           uint32_t dest_qp_num,
                           uint32_t rq_psn,
                           const rc_options& options = {});
constexpr int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                         IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
ibv_qp_attr rts_attributes(uint32_t sq_psn, const rc_options& options = {});
constexpr int rts_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                         IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;

// GID index 0 of the loopback port: ::ffff:127.0.0.1.
ibv_gid loopback_gid(ibv_context* context);

// Brings \p qp to RTS facing \p peer_qp_num (fails the test on an error).
void connect_to(ibv_qp* qp, uint32_t peer_qp_num, const rc_options& options = {});

// Two endpoints connected to each other over loopback.
struct rc_pair {
    rc_endpoint a;
    rc_endpoint b;
};
rc_pair make_connected_pair(const rc_options& a_options = {},
                            const rc_options& b_options = {});

// Posts one send WR: 0 or the errno.
int post_one_send(ibv_qp* qp,
                  uint64_t wr_id,
                  ibv_wr_opcode opcode,
                  std::vector<ibv_sge> sges,
                  int flags = IBV_SEND_SIGNALED,
                  uint64_t remote_addr = 0,
                  uint32_t rkey = 0,
                  uint32_t imm = 0);

// The next async event of \p context within the limit, or false.
bool next_async_event(ibv_context* context,
                      ibv_async_event& event,
                      std::chrono::milliseconds limit = std::chrono::seconds(3));

} // namespace verbs_test

#endif
