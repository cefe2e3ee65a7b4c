/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "device_context.h"

#include "completion_queue.h"
#include "device.h"
#include "flow_counters.h"
#include "log.h"
#include "verbs_lifecycle.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

namespace spead_emu {
namespace {

// Every operation slot the emulator does not implement aborts naming itself, so an
// application using a verb nobody emulated fails loudly instead of passing by accident.
#define SPEAD_EMU_UNEMULATED_OP(table, field)                  \
    (table).field = reinterpret_cast<decltype((table).field)>( \
        +[] { emulator_abort_unemulated(#field " (a verbs context operation)"); })

void install_context_operations(ibv_context_ops& ops)
{
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_query_device);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_query_port);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_alloc_pd);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_dealloc_pd);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_reg_mr);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_rereg_mr);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_dereg_mr);
    SPEAD_EMU_UNEMULATED_OP(ops, alloc_mw);
    SPEAD_EMU_UNEMULATED_OP(ops, bind_mw);
    SPEAD_EMU_UNEMULATED_OP(ops, dealloc_mw);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_create_cq);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_cq_event);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_resize_cq);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_destroy_cq);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_create_srq);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_modify_srq);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_query_srq);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_destroy_srq);
    SPEAD_EMU_UNEMULATED_OP(ops, post_srq_recv);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_create_qp);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_query_qp);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_modify_qp);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_destroy_qp);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_create_ah);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_destroy_ah);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_attach_mcast);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_detach_mcast);
    SPEAD_EMU_UNEMULATED_OP(ops, _compat_async_event);
    // The four the header-inline verbs reach (ibv_poll_cq, ibv_req_notify_cq,
    // ibv_post_send, ibv_post_recv); every other one aborts naming itself.
    ops.poll_cq = operations::poll_cq;
    ops.req_notify_cq = operations::req_notify_cq;
    ops.post_send = operations::post_send;
    ops.post_recv = operations::post_recv;
}

void install_extended_operations(verbs_context& context)
{
    context.query_port = operations::query_port;
    SPEAD_EMU_UNEMULATED_OP(context, advise_mr);
    SPEAD_EMU_UNEMULATED_OP(context, alloc_null_mr);
    context.read_counters = operations::read_counters;
    context.attach_counters_point_flow = operations::attach_counters_point_flow;
    // Flow counters are optional hardware (mlx5 has them, mlx4 not): without them
    // creating counters fails with EOPNOTSUPP, as rdma-core answers for such providers.
    context.create_counters = features().flow_counters
                                  ? operations::create_counters
                                  : operations::create_counters_unsupported;
    context.destroy_counters = operations::destroy_counters;
    SPEAD_EMU_UNEMULATED_OP(context, reg_dm_mr);
    SPEAD_EMU_UNEMULATED_OP(context, alloc_dm);
    SPEAD_EMU_UNEMULATED_OP(context, free_dm);
    SPEAD_EMU_UNEMULATED_OP(context, modify_flow_action_esp);
    SPEAD_EMU_UNEMULATED_OP(context, destroy_flow_action);
    SPEAD_EMU_UNEMULATED_OP(context, create_flow_action_esp);
    // A NIC without packet pacing answers EOPNOTSUPP; so does the emulator.
    context.modify_qp_rate_limit = operations::modify_qp_rate_limit;
    SPEAD_EMU_UNEMULATED_OP(context, alloc_parent_domain);
    SPEAD_EMU_UNEMULATED_OP(context, dealloc_td);
    SPEAD_EMU_UNEMULATED_OP(context, alloc_td);
    SPEAD_EMU_UNEMULATED_OP(context, modify_cq);
    SPEAD_EMU_UNEMULATED_OP(context, post_srq_ops);
    SPEAD_EMU_UNEMULATED_OP(context, destroy_rwq_ind_table);
    SPEAD_EMU_UNEMULATED_OP(context, create_rwq_ind_table);
    SPEAD_EMU_UNEMULATED_OP(context, destroy_wq);
    SPEAD_EMU_UNEMULATED_OP(context, modify_wq);
    SPEAD_EMU_UNEMULATED_OP(context, create_wq);
    SPEAD_EMU_UNEMULATED_OP(context, query_rt_values);
    SPEAD_EMU_UNEMULATED_OP(context, create_cq_ex);
    context.priv = nullptr;
    context.query_device_ex = operations::query_device_ex;
    context.ibv_destroy_flow = operations::destroy_flow;
    context.ibv_create_flow = operations::create_flow;
    SPEAD_EMU_UNEMULATED_OP(context, open_qp);
    SPEAD_EMU_UNEMULATED_OP(context, create_qp_ex);
    // The cx5 model (an mlx5 device) has extended CQs, WQs, indirection tables and
    // RX-hash QPs; the plain device does not model them.
    if (features().model == device_model::cx5) {
        context.create_cq_ex = operations::create_cq_ex;
        context.create_wq = operations::create_wq;
        context.modify_wq = operations::modify_wq;
        context.destroy_wq = operations::destroy_wq;
        context.create_rwq_ind_table = operations::create_rwq_ind_table;
        context.destroy_rwq_ind_table = operations::destroy_rwq_ind_table;
        context.create_qp_ex = operations::create_qp_ex;
    }
    SPEAD_EMU_UNEMULATED_OP(context, get_srq_num);
    SPEAD_EMU_UNEMULATED_OP(context, create_srq_ex);
    SPEAD_EMU_UNEMULATED_OP(context, open_xrcd);
    SPEAD_EMU_UNEMULATED_OP(context, close_xrcd);
    // verbs_get_ctx_op() trusts only slots that lie within `sz`: all of them.
    context.sz = sizeof(verbs_context);
}

int online_cpus()
{
    const long count = sysconf(_SC_NPROCESSORS_ONLN);
    return static_cast<int>(
        std::clamp(count, 1L, long{ device_limits::max_comp_vectors }));
}

} // namespace

device_context::device_context(emulated_device& device)
    : m_device(device), m_command_fd(eventfd(0, EFD_CLOEXEC))
{
    m_shell.owner = this;
    ibv_context& context = m_shell.verbs.context;
    context.device = device.verbs();
    install_context_operations(context.ops);
    install_extended_operations(m_shell.verbs);
    context.cmd_fd = m_command_fd.get(); // nothing is ever written to it
    context.async_fd = m_async_events.fd();
    // A RoCE NIC has one completion vector (EQ) per CPU, up to a device limit, unless
    // SPEAD_EMU_COMP_VECTORS says otherwise.
    context.num_comp_vectors =
        features().comp_vectors > 0 ? features().comp_vectors : online_cpus();
    pthread_mutex_init(&context.mutex, nullptr);
    // The marker verbs_get_ctx() checks before it trusts the extended context.
    context.abi_compat = __VERBS_ABI_IS_EXTENDED;
}

device_context* device_context::open(emulated_device& device)
{
    auto* context = new device_context(device);
    if (!context->m_command_fd || !context->m_async_events.valid()) {
        const int error = errno;
        delete context;
        errno = error;
        return nullptr;
    }
    device.add_context(context);
    trace("opened %s", device.verbs()->name);
    return context;
}

device_context* device_context::from(ibv_context* context)
{
    if (context == nullptr || context->abi_compat != __VERBS_ABI_IS_EXTENDED)
        return nullptr;
    auto* extended = reinterpret_cast<verbs_context*>(
        reinterpret_cast<uint8_t*>(context) - offsetof(verbs_context, context));
    return reinterpret_cast<context_shell*>(extended)->owner;
}

uint32_t device_context::allocate_memory_key()
{
    // Spread keys out so that an off-by-one or stale lkey is never another region's.
    return (m_next_memory_key++ << 8) | 0x5d;
}

int device_context::close()
{
    {
        std::lock_guard<std::mutex> lock(m_control_mutex);
        if (live_protection_domains || live_completion_queues ||
            live_completion_channels) {
            warn("ibv_close_device(%s) refused: %d PD(s), %d CQ(s) and %d completion "
                 "channel(s) still exist. rdma-core would release them behind the "
                 "application's back; destroy them first.",
                 m_device.verbs()->name,
                 live_protection_domains,
                 live_completion_queues,
                 live_completion_channels);
            return EBUSY;
        }
    }
    m_device.remove_context(this);
    trace("closed %s", m_device.verbs()->name);
    pthread_mutex_destroy(&m_shell.verbs.context.mutex);
    delete this;
    return 0;
}

} // namespace spead_emu

using spead_emu::device_context;
using spead_emu::emulated_device;

extern "C" {

ibv_context* ibv_open_device(ibv_device* device)
{
    emulated_device* emulated = emulated_device::from(device);
    if (emulated == nullptr || emulated->faults().removed()) {
        errno = ENODEV;
        return nullptr;
    }
    if (emulated->faults().fatal()) {
        errno = EIO;
        return nullptr;
    }
    device_context* context = device_context::open(*emulated);
    return context == nullptr ? nullptr : context->verbs();
}

int ibv_close_device(ibv_context* context)
{
    device_context* emulated = device_context::from(context);
    return emulated == nullptr ? EINVAL : emulated->close();
}

int ibv_get_async_event(ibv_context* context, ibv_async_event* event)
{
    device_context* emulated = spead_emu::owner_given<device_context>(context, event);
    if (emulated == nullptr)
        return -1;
    if (emulated->async_events().next(*event) != 0)
        return -1;
    if (event->event_type == IBV_EVENT_CQ_ERR)
        spead_emu::completion_queue::from(event->element.cq)->count_async_event_read();
    return 0;
}

void ibv_ack_async_event(ibv_async_event* event)
{
    // As rdma-core: bump the object's acknowledged count, which destroy calls wait for.
    switch (event->event_type) {
    case IBV_EVENT_CQ_ERR:
        spead_emu::acknowledge_events(
            *event->element.cq, &ibv_cq::async_events_completed, 1);
        break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
        spead_emu::acknowledge_events(*event->element.qp, &ibv_qp::events_completed, 1);
        break;
    default:
        break;
    }
}

} // extern "C"
