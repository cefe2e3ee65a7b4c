/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The RC QP state table: which transitions exist and the attribute masks each requires
// and allows (ibv_modify_qp(3), as the kernel's ib_modify_qp_is_ok checks them), and
// the attribute values an emulated port accepts.
#ifndef SPEAD_EMU_RC_TRANSITIONS_H
#define SPEAD_EMU_RC_TRANSITIONS_H

#include <infiniband/verbs.h>

namespace spead_emu {

// Whether ibv_modify_qp(\p mask) may move an RC QP from \p from to \p to: the
// transition exists, every required attribute is in the mask and nothing else is.
bool rc_transition_valid(ibv_qp_state from, ibv_qp_state to, int mask);

// 0, or EINVAL for a value out of range (port, P_Key index, timeouts, retry counts,
// path MTU, RDMA read depths).
int rc_attributes_valid(const ibv_qp_attr& attr, int mask);

} // namespace spead_emu

#endif
