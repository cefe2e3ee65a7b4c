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

void async_event_queue::post_port(ibv_event_type type, int port_num)
{
    post(type, reinterpret_cast<const void*>(static_cast<uintptr_t>(port_num)));
}

int async_event_queue::next(ibv_async_event& event)
{
    record queued;
    if (m_pipe.next(queued) != 0)
        return -1;
    event.event_type = static_cast<ibv_event_type>(queued.event_type);
    switch (event.event_type) {
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE:
        event.element.port_num = static_cast<int>(queued.element);
        break;
    default:
        event.element.cq =
            reinterpret_cast<ibv_cq*>(static_cast<uintptr_t>(queued.element));
        break;
    }
    return 0;
}

int async_event_queue::discard_events_about(const void* element)
{
    const auto address = reinterpret_cast<uintptr_t>(element);
    return m_pipe.discard_if(
        [address](const record& queued) { return queued.element == address; });
}

} // namespace spead_emu
