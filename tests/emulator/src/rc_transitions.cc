/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "rc_transitions.h"

#include "device.h"

#include <cerrno>

namespace spead_emu {
namespace {

struct rule {
    ibv_qp_state from;
    ibv_qp_state to;
    int required;
    int optional;
};

// The RC rows of the IB spec's QP state table (ibv_modify_qp(3)).
constexpr rule rules[] = {
    { IBV_QPS_RESET,
      IBV_QPS_INIT,
      IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
      0 },
    { IBV_QPS_INIT,
      IBV_QPS_INIT,
      0,
      IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS },
    { IBV_QPS_INIT,
      IBV_QPS_RTR,
      IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
      IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX },
    { IBV_QPS_RTR,
      IBV_QPS_RTS,
      IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
          IBV_QP_MAX_QP_RD_ATOMIC,
      IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
          IBV_QP_PATH_MIG_STATE },
    { IBV_QPS_RTS,
      IBV_QPS_RTS,
      0,
      IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
          IBV_QP_MIN_RNR_TIMER },
};

} // namespace

bool rc_transition_valid(ibv_qp_state from, ibv_qp_state to, int mask)
{
    // Any state may go to RESET or ERR, with the state alone.
    if (to == IBV_QPS_RESET || to == IBV_QPS_ERR)
        return (mask & ~(IBV_QP_STATE | IBV_QP_CUR_STATE)) == 0;
    for (const rule& r : rules) {
        if (r.from != from || r.to != to)
            continue;
        // A move to another state names it; staying (INIT->INIT, RTS->RTS) may not.
        if (from != to && !(mask & IBV_QP_STATE))
            return false;
        return (mask & r.required) == r.required &&
               (mask & ~(r.required | r.optional | IBV_QP_STATE)) == 0;
    }
    return false; // SQD, SQE and the transitions the table lacks are not emulated
}

int rc_attributes_valid(const ibv_qp_attr& attr, int mask)
{
    if ((mask & IBV_QP_PORT) && attr.port_num != 1)
        return EINVAL;
    if ((mask & IBV_QP_PKEY_INDEX) && attr.pkey_index != 0)
        return EINVAL; // a RoCE port has one P_Key
    if ((mask & IBV_QP_AV) && attr.ah_attr.port_num != 1 && attr.ah_attr.port_num != 0)
        return EINVAL;
    if ((mask & IBV_QP_PATH_MTU) &&
        (attr.path_mtu < IBV_MTU_256 || attr.path_mtu > IBV_MTU_4096))
        return EINVAL;
    if ((mask & IBV_QP_TIMEOUT) && attr.timeout > 31)
        return EINVAL;
    if ((mask & IBV_QP_RETRY_CNT) && attr.retry_cnt > 7)
        return EINVAL;
    if ((mask & IBV_QP_RNR_RETRY) && attr.rnr_retry > 7)
        return EINVAL;
    if ((mask & IBV_QP_MIN_RNR_TIMER) && attr.min_rnr_timer > 31)
        return EINVAL;
    if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
        attr.max_dest_rd_atomic > device_limits::max_rd_atomic)
        return EINVAL;
    if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
        attr.max_rd_atomic > device_limits::max_rd_atomic)
        return EINVAL;
    return 0;
}

} // namespace spead_emu
