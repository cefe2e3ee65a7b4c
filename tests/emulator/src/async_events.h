/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The context's async event fd (context->async_fd), as the kernel provides it.
#ifndef SPEAD_EMU_ASYNC_EVENTS_H
#define SPEAD_EMU_ASYNC_EVENTS_H

#include "event_pipe.h"

#include <infiniband/verbs.h>

#include <cstdint>

namespace spead_emu {

class async_event_queue
{
public:
    bool valid() const { return m_pipe.valid(); }
    int fd() const { return m_pipe.fd(); }

    // element: the ibv_cq* or ibv_qp* the event is about.
    void post(ibv_event_type type, const void* element);
    // A port event (element.port_num), or one about the device (port_num 0).
    void post_port(ibv_event_type type, int port_num);
    // 0, or -1 with errno (EAGAIN on an empty non-blocking fd).
    int next(ibv_async_event& event);
    // Drop unread events about an object being destroyed, as the kernel does.
    int discard_events_about(const void* element);

private:
    // Same shape as the kernel's struct ib_uverbs_async_event_desc.
    struct record {
        uint64_t element;
        uint32_t event_type;
        uint32_t reserved;
    };
    event_pipe<record> m_pipe;
};

} // namespace spead_emu

#endif
