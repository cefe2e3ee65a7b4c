/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Event channels and CM events: rdma_create_event_channel, rdma_get_cm_event,
// rdma_ack_cm_event, rdma_event_str, and the waiting of librdmacm's synchronous ids.
#include "log.h"
#include "rdma_cm_id.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace spead_emu {

cm_channel_shell* new_channel_shell()
{
    const int fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
    if (fd < 0)
        return nullptr;
    auto* shell = new cm_channel_shell;
    shell->channel.fd = fd;
    return shell;
}

void destroy_channel_shell(cm_channel_shell* shell)
{
    if (shell == nullptr)
        return;
    {
        std::lock_guard<std::mutex> lock(shell->mutex);
        if (!shell->queue.empty())
            warn("rdma_destroy_event_channel: %zu events were never read; destroy the "
                 "ids first, as librdmacm requires",
                 shell->queue.size());
        for (cm_event_shell* event : shell->queue)
            delete event;
    }
    close(shell->channel.fd);
    delete shell;
}

namespace {

void enqueue(cm_channel_shell* channel, cm_event_shell* event)
{
    std::lock_guard<std::mutex> lock(channel->mutex);
    channel->queue.push_back(event);
    const uint64_t one = 1;
    if (write(channel->channel.fd, &one, sizeof(one)) != sizeof(one))
        warn("rdma_cm: could not signal the event channel: %s", strerror(errno));
}

// Takes the id's events out of the channel's queue. Their eventfd counts stay; a reader
// that takes one finds nothing and reads again (a spurious wake-up, never a lost event).
std::deque<cm_event_shell*> take_events_of(cm_channel_shell* channel, rdma_cm_id* id)
{
    std::deque<cm_event_shell*> taken;
    std::lock_guard<std::mutex> lock(channel->mutex);
    auto& queue = channel->queue;
    for (auto it = queue.begin(); it != queue.end();) {
        if ((*it)->event.id == id) {
            taken.push_back(*it);
            it = queue.erase(it);
        } else {
            ++it;
        }
    }
    return taken;
}

} // namespace

void post_cm_event(cm_id_shell* shell,
                   rdma_cm_event_type type,
                   int status,
                   const rdma_conn_param* param,
                   int private_data_len,
                   rdma_cm_id* listen_id)
{
    auto* event = new cm_event_shell;
    event->event.id = &shell->id;
    event->event.listen_id = listen_id;
    event->event.event = type;
    event->event.status = status;
    if (param != nullptr) {
        event->event.param.conn = *param;
        // rdma_cm reports the whole private data area of the CM message, zero padded.
        const int length = std::min<int>(private_data_len, sizeof(event->private_data));
        if (param->private_data != nullptr)
            memcpy(event->private_data,
                   param->private_data,
                   std::min<int>(length, param->private_data_len));
        event->event.param.conn.private_data = length > 0 ? event->private_data : nullptr;
        event->event.param.conn.private_data_len = static_cast<uint8_t>(length);
    }
    trace(
        "rdma_cm: %s (status %d) for id %p", rdma_event_str(type), status, (void*)shell);
    cm_channel_shell* channel;
    {
        std::lock_guard<std::mutex> lock(shell->mutex);
        channel = shell_of(shell->id.channel);
    }
    enqueue(channel, event);
}

void discard_cm_events(cm_id_shell* shell)
{
    cm_channel_shell* channel = shell_of(shell->id.channel);
    for (cm_event_shell* event : take_events_of(channel, &shell->id))
        delete event;
    // A listener's requests nobody read yet go with it, as the kernel drops them; their
    // peers see the connection close.
    std::deque<cm_event_shell*> requests;
    {
        std::lock_guard<std::mutex> lock(channel->mutex);
        auto& queue = channel->queue;
        for (auto it = queue.begin(); it != queue.end();) {
            if ((*it)->event.listen_id == &shell->id) {
                requests.push_back(*it);
                it = queue.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (cm_event_shell* request : requests) {
        rdma_cm_id* unreported = request->event.id;
        delete request;
        rdma_destroy_id(unreported);
    }
}

void move_cm_events(cm_id_shell* shell, cm_channel_shell* from, cm_channel_shell* to)
{
    for (cm_event_shell* event : take_events_of(from, &shell->id))
        enqueue(to, event);
}

int complete_synchronously(cm_id_shell* shell)
{
    rdma_cm_id* id = &shell->id;
    if (id->event != nullptr) {
        rdma_ack_cm_event(id->event);
        id->event = nullptr;
    }
    if (rdma_get_cm_event(id->channel, &id->event) != 0)
        return -1;
    const int status = id->event->status;
    if (status == 0)
        return 0;
    errno = id->event->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED
            : status < 0                               ? -status
                                                       : status;
    return -1;
}

namespace {

// The id an event counts against until acknowledged: a CONNECT_REQUEST the listener's
// (its new id is the application's to destroy), as librdmacm counts them.
cm_id_shell* owner_of(const rdma_cm_event& event)
{
    return shell_of(event.event == RDMA_CM_EVENT_CONNECT_REQUEST ? event.listen_id
                                                                 : event.id);
}

} // namespace

int wait_for_acknowledgements(cm_id_shell* shell, std::chrono::milliseconds bound)
{
    std::unique_lock<std::mutex> lock(shell->mutex);
    shell->acknowledged.wait_for(
        lock, bound, [shell] { return shell->events_unacknowledged == 0; });
    return shell->events_unacknowledged;
}

} // namespace spead_emu

extern "C" {

rdma_event_channel* rdma_create_event_channel()
{
    spead_emu::cm_channel_shell* shell = spead_emu::new_channel_shell();
    return shell == nullptr ? nullptr : &shell->channel;
}

void rdma_destroy_event_channel(rdma_event_channel* channel)
{
    if (channel != nullptr)
        spead_emu::destroy_channel_shell(spead_emu::shell_of(channel));
}

int rdma_get_cm_event(rdma_event_channel* channel, rdma_cm_event** event)
{
    if (channel == nullptr || event == nullptr) {
        errno = EINVAL;
        return -1;
    }
    auto* shell = spead_emu::shell_of(channel);
    for (;;) {
        // Blocks unless the application set O_NONBLOCK on channel->fd (then EAGAIN).
        uint64_t count = 0;
        if (read(channel->fd, &count, sizeof(count)) != sizeof(count))
            return -1;
        rdma_cm_event* next = nullptr;
        {
            // Taken and counted under one lock: rdma_destroy_id discards the id's queued
            // events and then waits for the count, so no event escapes both.
            std::lock_guard<std::mutex> lock(shell->mutex);
            if (shell->queue.empty())
                continue;
            next = &shell->queue.front()->event;
            shell->queue.pop_front();
            spead_emu::cm_id_shell* owner = spead_emu::owner_of(*next);
            std::lock_guard<std::mutex> owner_lock(owner->mutex);
            owner->events_unacknowledged++;
        }
        if (next->event == RDMA_CM_EVENT_CONNECT_RESPONSE)
            spead_emu::process_connect_response(next);
        *event = next;
        return 0;
    }
}

int rdma_ack_cm_event(rdma_cm_event* event)
{
    if (event == nullptr) {
        errno = EINVAL;
        return -1;
    }
    spead_emu::cm_id_shell* owner = spead_emu::owner_of(*event);
    delete reinterpret_cast<spead_emu::cm_event_shell*>(event);
    // Notified under the lock: a waiting rdma_destroy_id frees the id once it has it.
    std::lock_guard<std::mutex> lock(owner->mutex);
    owner->events_unacknowledged--;
    owner->acknowledged.notify_all();
    return 0;
}

const char* rdma_event_str(rdma_cm_event_type event)
{
    switch (event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        return "RDMA_CM_EVENT_ADDR_RESOLVED";
    case RDMA_CM_EVENT_ADDR_ERROR:
        return "RDMA_CM_EVENT_ADDR_ERROR";
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
        return "RDMA_CM_EVENT_ROUTE_RESOLVED";
    case RDMA_CM_EVENT_ROUTE_ERROR:
        return "RDMA_CM_EVENT_ROUTE_ERROR";
    case RDMA_CM_EVENT_CONNECT_REQUEST:
        return "RDMA_CM_EVENT_CONNECT_REQUEST";
    case RDMA_CM_EVENT_CONNECT_RESPONSE:
        return "RDMA_CM_EVENT_CONNECT_RESPONSE";
    case RDMA_CM_EVENT_CONNECT_ERROR:
        return "RDMA_CM_EVENT_CONNECT_ERROR";
    case RDMA_CM_EVENT_UNREACHABLE:
        return "RDMA_CM_EVENT_UNREACHABLE";
    case RDMA_CM_EVENT_REJECTED:
        return "RDMA_CM_EVENT_REJECTED";
    case RDMA_CM_EVENT_ESTABLISHED:
        return "RDMA_CM_EVENT_ESTABLISHED";
    case RDMA_CM_EVENT_DISCONNECTED:
        return "RDMA_CM_EVENT_DISCONNECTED";
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        return "RDMA_CM_EVENT_DEVICE_REMOVAL";
    case RDMA_CM_EVENT_MULTICAST_JOIN:
        return "RDMA_CM_EVENT_MULTICAST_JOIN";
    case RDMA_CM_EVENT_MULTICAST_ERROR:
        return "RDMA_CM_EVENT_MULTICAST_ERROR";
    case RDMA_CM_EVENT_ADDR_CHANGE:
        return "RDMA_CM_EVENT_ADDR_CHANGE";
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
        return "RDMA_CM_EVENT_TIMEWAIT_EXIT";
    }
    return "UNKNOWN EVENT";
}

} // extern "C"
