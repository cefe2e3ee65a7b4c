/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The ibv_flow an application holds: a steering rule attached to a QP.
#ifndef SPEAD_EMU_STEERING_FLOW_H
#define SPEAD_EMU_STEERING_FLOW_H

#include "flow_rule.h"
#include "object_shell.h"

#include <infiniband/verbs.h>

namespace spead_emu {

class device_context;
class flow_counters;
class queue_pair;

class steering_flow
{
public:
    steering_flow(queue_pair& qp,
                  const flow_rule& rule,
                  flow_counters* counters,
                  uint32_t handle);
    static steering_flow* from(ibv_flow* flow);
    ibv_flow* verbs() { return &m_shell.verbs; }
    queue_pair& qp() { return m_qp; }
    device_context& context();
    const flow_rule& rule() const { return m_rule; }
    // Bound by an IBV_FLOW_SPEC_ACTION_COUNT spec: counts every frame steered here.
    flow_counters* counters() const { return m_counters; }

private:
    object_shell<ibv_flow, steering_flow> m_shell{ this };
    queue_pair& m_qp;
    flow_rule m_rule;
    flow_counters* m_counters;
};

} // namespace spead_emu

#endif
