/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// A completion event channel with the kernel's semantics: channel->fd is a real fd,
// readable while events are queued; each armed CQ that receives a completion queues one
// 8-byte event (the CQ's handle); ibv_get_cq_event reads one, blocking unless the
// application made the fd O_NONBLOCK.
#ifndef SPEAD_EMU_COMPLETION_CHANNEL_H
#define SPEAD_EMU_COMPLETION_CHANNEL_H

#include "event_pipe.h"
#include "object_shell.h"

#include <infiniband/verbs.h>

#include <cstdint>

namespace spead_emu {

class device_context;

class completion_channel
{
public:
    // nullptr with errno set when the pipe cannot be made.
    static completion_channel* create(device_context& context);
    static completion_channel* from(ibv_comp_channel* channel);
    ibv_comp_channel* verbs() { return &m_shell.verbs; }
    device_context& context() { return m_context; }

    // Queue the event of an armed CQ that got a completion.
    void notify(ibv_cq* cq);
    // ibv_get_cq_event: 0, or -1 with errno.
    int next(ibv_cq*& cq);
    // Drop the unread events of a CQ being destroyed, as the kernel does.
    int discard_events_of(const ibv_cq* cq);

private:
    explicit completion_channel(device_context& context);

    object_shell<ibv_comp_channel, completion_channel> m_shell{ this };
    device_context& m_context;
    // Same shape as the kernel's struct ib_uverbs_comp_event_desc.
    event_pipe<uint64_t> m_pipe;
};

} // namespace spead_emu

#endif
