/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "steering_flow.h"

#include "device_context.h"
#include "flow_counters.h"
#include "log.h"
#include "queue_pair.h"
#include "verbs_lifecycle.h"

#include <cerrno>
#include <mutex>
#include <string>

namespace spead_emu {

steering_flow::steering_flow(queue_pair& qp,
                             const flow_rule& rule,
                             flow_counters* counters,
                             uint32_t handle)
    : m_qp(qp), m_rule(rule), m_counters(counters)
{
    m_shell.verbs.context = qp.verbs()->context;
    m_shell.verbs.handle = handle;
}

steering_flow* steering_flow::from(ibv_flow* flow)
{
    return object_shell<ibv_flow, steering_flow>::owner_of(flow);
}

device_context& steering_flow::context() { return m_qp.context(); }

namespace operations {

ibv_flow* create_flow(ibv_qp* qp, ibv_flow_attr* attr)
{
    queue_pair* target = owner_given<queue_pair>(qp, attr);
    if (target == nullptr)
        return nullptr;
    flow_rule rule;
    std::string reason;
    if (const int error = flow_rule::parse(*attr, rule, reason)) {
        // Hardware says only EOPNOTSUPP; the emulator also says why.
        (error == EOPNOTSUPP ? warn : trace)("ibv_create_flow: %s (%s)",
                                             reason.c_str(),
                                             error == EOPNOTSUPP ? "EOPNOTSUPP"
                                                                 : "EINVAL");
        errno = error;
        return nullptr;
    }
    device_context& context = target->context();
    std::lock_guard<std::mutex> lock(context.control_mutex());
    flow_counters* counters = nullptr;
    if (rule.counters() != nullptr) {
        counters = flow_counters::from(rule.counters());
        if (counters == nullptr || &counters->context() != &context) {
            trace("ibv_create_flow: IBV_FLOW_SPEC_ACTION_COUNT names counters of "
                  "another device context (EINVAL)");
            errno = EINVAL;
            return nullptr;
        }
        if (const int error = counters->bind(reason)) {
            warn("ibv_create_flow: %s (EINVAL)", reason.c_str());
            errno = error;
            return nullptr;
        }
    }
    auto* flow = new steering_flow(*target, rule, counters, context.allocate_handle());
    target->attach(*flow);
    context.live_flows++;
    trace("flow %u on QP 0x%x: %s",
          flow->verbs()->handle,
          qp->qp_num,
          rule.describe().c_str());
    return flow->verbs();
}

int destroy_flow(ibv_flow* flow)
{
    return destroy_in_context<steering_flow>(
        flow, &device_context::live_flows, [](steering_flow& emulated, device_context&) {
            emulated.qp().detach(emulated);
            if (emulated.counters() != nullptr)
                emulated.counters()->unbind();
            return 0;
        });
}

} // namespace operations
} // namespace spead_emu
