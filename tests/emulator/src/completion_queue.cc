/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "completion_queue.h"

#include "completion_channel.h"
#include "device.h"
#include "device_context.h"
#include "log.h"
#include "queue_pair.h"
#include "rc_queue_pair.h"
#include "verbs_lifecycle.h"
#include "work_queue.h"

#include <algorithm>
#include <cerrno>
#include <functional>

namespace spead_emu {
namespace {

// mlx5 allocates a power-of-two ring and reports one less than its size as cq->cqe;
// applications must size their work against the returned cqe.
int ring_size_for(int requested)
{
    int size = 1;
    while (size < requested + 1)
        size <<= 1;
    return size - 1;
}

} // namespace

completion_queue::completion_queue(device_context& context,
                                   int capacity,
                                   void* cq_context,
                                   completion_channel* channel)
    : m_context(context), m_channel(channel), m_ring(static_cast<size_t>(capacity))
{
    ibv_cq_ex& cq = m_shell.verbs;
    cq.context = context.verbs();
    cq.channel = channel == nullptr ? nullptr : channel->verbs();
    cq.cq_context = cq_context;
    cq.handle = context.allocate_handle();
    cq.cqe = capacity;
}

completion_queue::~completion_queue() = default;

completion_queue* completion_queue::from(ibv_cq* cq)
{
    return object_shell<ibv_cq_ex, completion_queue>::owner_of(
        reinterpret_cast<ibv_cq_ex*>(cq));
}

bool completion_queue::push(const completion_entry& entry)
{
    std::unique_lock<std::mutex> lock(m_mutex);
    if (m_overrun)
        return false;
    if (m_count == m_ring.size()) {
        // A real CQ overruns the same way: the completion is lost, the CQ is broken and
        // the consumer learns it from an async CQ_ERR event.
        m_overrun = true;
        lock.unlock();
        warn("CQ %u overrun: %zu completions were not polled in time; completion of "
             "wr_id %llu lost, IBV_EVENT_CQ_ERR raised, ibv_poll_cq fails once drained",
             m_shell.verbs.handle,
             m_ring.size(),
             static_cast<unsigned long long>(entry.wc.wr_id));
        m_context.async_events().post(IBV_EVENT_CQ_ERR, verbs());
        return false;
    }
    m_ring[(m_head + m_count) % m_ring.size()] = entry;
    m_count++;
    // Armed for the next completion (any, or only solicited ones and errors): one event,
    // then the CQ must be re-armed.
    const bool notify =
        m_armed && (!m_armed_solicited_only || entry.wc.status != IBV_WC_SUCCESS);
    if (notify)
        m_armed = false;
    lock.unlock();
    if (notify && m_channel != nullptr)
        m_channel->notify(verbs());
    return true;
}

int completion_queue::poll(int max_entries, ibv_wc* completions)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    int taken = 0;
    while (taken < max_entries && m_count > 0)
        take_locked(completions[taken++]);
    if (taken == 0 && m_overrun) {
        errno = EOVERFLOW;
        return -1;
    }
    return taken;
}

void completion_queue::take_locked(ibv_wc& completion)
{
    const completion_entry& entry = m_ring[m_head];
    completion = entry.wc;
    // Polling is what frees the work queue slots (the NIC's consumer index moves).
    if (entry.wq != nullptr)
        completion.wr_id = entry.wq->wr_id_of_next_completion();
    else if (entry.rc_qp != nullptr)
        entry.rc_qp->release_slots_through(entry.is_send, entry.work_queue_index);
    else if (entry.is_send)
        entry.qp->release_send_slots_through(entry.work_queue_index);
    else
        entry.qp->release_receive_slots_through(entry.work_queue_index);
    m_head = (m_head + 1) % m_ring.size();
    m_count--;
}

int completion_queue::poll_one()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_count == 0)
        return m_overrun ? EOVERFLOW : ENOENT;
    take_locked(m_current);
    m_shell.verbs.wr_id = m_current.wr_id;
    m_shell.verbs.status = m_current.status;
    return 0;
}

bool completion_queue::inject_overrun()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_overrun)
            return false;
        m_overrun = true;
    }
    warn(
        "CQ %u overrun injected: IBV_EVENT_CQ_ERR raised, ibv_poll_cq fails once drained",
        m_shell.verbs.handle);
    return true;
}

int completion_queue::arm(bool solicited_only)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_armed = true;
    m_armed_solicited_only = solicited_only;
    return 0;
}

void completion_queue::remove_entries_of(const queue_pair* qp)
{
    remove_entries_if([qp](const completion_entry& entry) { return entry.qp == qp; });
}

void completion_queue::remove_entries_of(const work_queue* wq)
{
    remove_entries_if([wq](const completion_entry& entry) { return entry.wq == wq; });
}

void completion_queue::remove_entries_of(const rc_queue_pair* qp)
{
    remove_entries_if([qp](const completion_entry& entry) { return entry.rc_qp == qp; });
}

void completion_queue::remove_entries_if(
    const std::function<bool(const completion_entry&)>& unwanted)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    std::vector<completion_entry> kept;
    kept.reserve(m_count);
    for (size_t i = 0; i < m_count; i++) {
        const completion_entry& entry = m_ring[(m_head + i) % m_ring.size()];
        if (!unwanted(entry))
            kept.push_back(entry);
    }
    for (size_t i = 0; i < kept.size(); i++)
        m_ring[i] = kept[i];
    m_head = 0;
    m_count = kept.size();
}

uint32_t completion_queue::unacknowledged_completion_events()
{
    pthread_mutex_lock(&m_shell.verbs.mutex);
    const uint32_t acknowledged = m_shell.verbs.comp_events_completed;
    pthread_mutex_unlock(&m_shell.verbs.mutex);
    return m_completion_events_read - acknowledged;
}

uint32_t completion_queue::unacknowledged_async_events()
{
    pthread_mutex_lock(&m_shell.verbs.mutex);
    const uint32_t acknowledged = m_shell.verbs.async_events_completed;
    pthread_mutex_unlock(&m_shell.verbs.mutex);
    return m_async_events_read - acknowledged;
}

completion_queue* completion_queue::create(ibv_context* context,
                                           int cqe,
                                           void* cq_context,
                                           ibv_comp_channel* channel,
                                           int comp_vector)
{
    device_context* emulated = device_context::from(context);
    completion_channel* events = completion_channel::from(channel);
    if (emulated == nullptr || cqe < 1 || cqe > device_limits::max_cqe ||
        comp_vector < 0 || comp_vector >= context->num_comp_vectors ||
        (events != nullptr && &events->context() != emulated)) {
        errno = EINVAL;
        return nullptr;
    }
    if (emulated->device().faults().fatal()) {
        errno = EIO;
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(emulated->control_mutex());
    auto* cq = new completion_queue(*emulated, ring_size_for(cqe), cq_context, events);
    emulated->completion_queues.push_back(cq);
    if (channel != nullptr)
        channel->refcnt++;
    emulated->live_completion_queues++;
    trace("CQ %u: %d entries, comp_vector %d%s",
          cq->verbs()->handle,
          cq->verbs()->cqe,
          comp_vector,
          channel ? ", with a completion channel" : "");
    return cq;
}

namespace operations {

int poll_cq(ibv_cq* cq, int entries, ibv_wc* completions)
{
    return completion_queue::from(cq)->poll(entries, completions);
}

int req_notify_cq(ibv_cq* cq, int solicited_only)
{
    return completion_queue::from(cq)->arm(solicited_only != 0);
}

} // namespace operations
} // namespace spead_emu

using spead_emu::completion_channel;
using spead_emu::completion_queue;
using spead_emu::device_context;

extern "C" {

ibv_cq* ibv_create_cq(ibv_context* context,
                      int cqe,
                      void* cq_context,
                      ibv_comp_channel* channel,
                      int comp_vector)
{
    completion_queue* cq =
        completion_queue::create(context, cqe, cq_context, channel, comp_vector);
    return cq == nullptr ? nullptr : cq->verbs();
}

int ibv_destroy_cq(ibv_cq* cq)
{
    return spead_emu::destroy_in_context<completion_queue>(
        cq,
        &device_context::live_completion_queues,
        [cq](completion_queue& emulated, device_context& context) {
            if (emulated.attached_queue_pairs != 0) {
                spead_emu::trace("ibv_destroy_cq refused: %d QP(s) still use it",
                                 emulated.attached_queue_pairs);
                return EBUSY; // the kernel refuses too
            }
            // Unread events die with the CQ, as in the kernel; read ones must be
            // acknowledged.
            if (emulated.channel() != nullptr)
                emulated.channel()->discard_events_of(cq);
            context.async_events().discard_events_about(cq);
            const uint32_t completion_events =
                emulated.unacknowledged_completion_events();
            const uint32_t async_events = emulated.unacknowledged_async_events();
            if (completion_events != 0 || async_events != 0) {
                spead_emu::warn(
                    "ibv_destroy_cq(CQ %u) refused with EBUSY: %u completion event(s) "
                    "from ibv_get_cq_event and %u async event(s) were never "
                    "acknowledged. On hardware this call blocks forever; call "
                    "ibv_ack_cq_events/ibv_ack_async_event first.",
                    cq->handle,
                    completion_events,
                    async_events);
                return EBUSY;
            }
            if (cq->channel != nullptr)
                cq->channel->refcnt--;
            context.completion_queues.erase(std::find(context.completion_queues.begin(),
                                                      context.completion_queues.end(),
                                                      &emulated));
            return 0;
        });
}

} // extern "C"
