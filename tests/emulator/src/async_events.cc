/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "async_events.h"

#include "log.h"

namespace spead_emu {

void async_event_queue::post(ibv_event_type type, const void* element)
{
    if (!m_pipe.post(record{
            reinterpret_cast<uintptr_t>(element), static_cast<uint32_t>(type), 0 }))
        warn("async event %s lost: the application never reads context->async_fd",
             ibv_event_type_str(type));
}

int async_event_queue::next(ibv_async_event& event)
{
    record queued;
    if (m_pipe.next(queued) != 0)
        return -1;
    event.event_type = static_cast<ibv_event_type>(queued.event_type);
    event.element.cq = reinterpret_cast<ibv_cq*>(static_cast<uintptr_t>(queued.element));
    return 0;
}

int async_event_queue::discard_events_about(const void* element)
{
    const auto address = reinterpret_cast<uintptr_t>(element);
    return m_pipe.discard_if(
        [address](const record& queued) { return queued.element == address; });
}

} // namespace spead_emu
