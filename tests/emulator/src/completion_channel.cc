/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "completion_channel.h"

#include "completion_queue.h"
#include "device_context.h"
#include "log.h"
#include "verbs_lifecycle.h"

#include <cerrno>
#include <mutex>

namespace spead_emu {

completion_channel::completion_channel(device_context& context) : m_context(context)
{
    m_shell.verbs.context = context.verbs();
    m_shell.verbs.fd = m_pipe.fd();
    m_shell.verbs.refcnt = 0; // CQs using the channel, as rdma-core counts them
}

completion_channel* completion_channel::create(device_context& context)
{
    auto* channel = new completion_channel(context);
    if (!channel->m_pipe.valid()) {
        const int error = errno;
        delete channel;
        errno = error;
        return nullptr;
    }
    return channel;
}

completion_channel* completion_channel::from(ibv_comp_channel* channel)
{
    return object_shell<ibv_comp_channel, completion_channel>::owner_of(channel);
}

void completion_channel::notify(ibv_cq* cq)
{
    if (!m_pipe.post(reinterpret_cast<uintptr_t>(cq)))
        warn("completion event of CQ %u lost: thousands of events are queued on the "
             "channel and the application never reads them",
             cq->handle);
}

int completion_channel::next(ibv_cq*& cq)
{
    uint64_t handle = 0;
    if (m_pipe.next(handle) != 0)
        return -1;
    cq = reinterpret_cast<ibv_cq*>(static_cast<uintptr_t>(handle));
    return 0;
}

int completion_channel::discard_events_of(const ibv_cq* cq)
{
    const auto handle = reinterpret_cast<uintptr_t>(cq);
    return m_pipe.discard_if([handle](uint64_t queued) { return queued == handle; });
}

} // namespace spead_emu

using spead_emu::completion_channel;
using spead_emu::completion_queue;
using spead_emu::device_context;

extern "C" {

ibv_comp_channel* ibv_create_comp_channel(ibv_context* context)
{
    return spead_emu::create_in_context(
        context, &device_context::live_completion_channels, completion_channel::create);
}

int ibv_destroy_comp_channel(ibv_comp_channel* channel)
{
    return spead_emu::destroy_in_context<completion_channel>(
        channel,
        &device_context::live_completion_channels,
        [channel](completion_channel&, device_context&) {
            if (channel->refcnt != 0) {
                spead_emu::trace(
                    "ibv_destroy_comp_channel refused: %d CQ(s) still use it",
                    channel->refcnt);
                return EBUSY; // as rdma-core
            }
            return 0;
        });
}

int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context)
{
    completion_channel* emulated = completion_channel::from(channel);
    if (emulated == nullptr || cq == nullptr || cq_context == nullptr) {
        errno = EINVAL;
        return -1;
    }
    ibv_cq* signalled = nullptr;
    if (emulated->next(signalled) != 0)
        return -1;
    completion_queue::from(signalled)->count_completion_event_read();
    *cq = signalled;
    *cq_context = signalled->cq_context;
    return 0;
}

void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents)
{
    // rdma-core's bookkeeping, on the public struct: ibv_destroy_cq waits for it.
    spead_emu::acknowledge_events(*cq, &ibv_cq::comp_events_completed, nevents);
}

} // extern "C"
