/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Faults a test injects into an emulated device, reported on the contexts' async fds as
// rdma-core reports them (ibv_get_async_event(3)): spead_emu_inject_fault and
// spead_emu_set_frame_faults (version node SPEAD_EMU_PRIVATE_1).
//
// SPEAD_EMU_FAULT_EVENT_DELAY_MS=N: a fault's async events come N ms after the fault
// took effect (the injecting call waits that long), as a driver's event may trail the
// failure a polling thread already saw: a verb fails before its cause can be read.
#include "fault_injection.h"

#include "completion_queue.h"
#include "device.h"
#include "device_context.h"
#include "log.h"
#include "queue_pair.h"

#include <spead_emu/extensions.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace spead_emu {
namespace {

uint32_t threshold(double probability)
{
    if (!(probability > 0))
        return 0;
    if (probability >= 1)
        return UINT32_MAX;
    return static_cast<uint32_t>(probability * 4294967296.0);
}

// xorshift64*: cheap, and each QP's sequence is the same from run to run.
uint32_t next_random(uint64_t& state)
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<uint32_t>((state * 0x2545f4914f6cdd1dull) >> 32);
}

// An async event a fault raises, posted once the fault has taken effect.
struct pending_event {
    async_event_queue* queue;
    ibv_event_type type;
    const void* element;
};
using pending_events = std::vector<pending_event>;

// SPEAD_EMU_FAULT_EVENT_DELAY_MS (see the top).
std::chrono::milliseconds event_delay()
{
    const char* value = getenv("SPEAD_EMU_FAULT_EVENT_DELAY_MS");
    return std::chrono::milliseconds(value ? atoi(value) : 0);
}

// Posts \p events, event_delay() after the fault: without a delay at once.
void post_after_delay(const pending_events& events)
{
    const auto delay = event_delay();
    if (delay.count() > 0) {
        warn("holding %zu async event(s) back for %lld ms "
             "(SPEAD_EMU_FAULT_EVENT_DELAY_MS)",
             events.size(),
             static_cast<long long>(delay.count()));
        std::this_thread::sleep_for(delay);
    }
    for (const pending_event& e : events)
        e.queue->post(e.type, e.element);
}

emulated_device* find_device(const char* name)
{
    if (name == nullptr)
        return nullptr;
    for (emulated_device* device : discover_devices())
        if (strcmp(device->verbs()->name, name) == 0)
            return device;
    return nullptr;
}

// Every QP of the device to ERR (flushing what is outstanding); with \p events, each
// one's IBV_EVENT_QP_FATAL goes there. \return how many QPs broke.
int break_queue_pairs(emulated_device& device, const char* reason, pending_events* events)
{
    int broken = 0;
    device.for_each_context([&](device_context& context) {
        std::lock_guard<std::mutex> lock(context.control_mutex());
        for (queue_pair* qp : context.queue_pairs) {
            if (!qp->break_for_fault(reason))
                continue;
            broken++;
            if (events)
                events->push_back(
                    { &context.async_events(), IBV_EVENT_QP_FATAL, qp->verbs() });
        }
    });
    return broken;
}

int overrun_completion_queues(emulated_device& device, pending_events& events)
{
    int overrun = 0;
    device.for_each_context([&](device_context& context) {
        std::lock_guard<std::mutex> lock(context.control_mutex());
        for (completion_queue* cq : context.completion_queues) {
            if (cq->attached_queue_pairs == 0)
                continue;
            if (cq->inject_overrun())
                events.push_back(
                    { &context.async_events(), IBV_EVENT_CQ_ERR, cq->verbs() });
            overrun++;
            for (queue_pair* qp : context.queue_pairs)
                if (qp->uses(*cq))
                    qp->break_for_fault("its completion queue overran");
        }
    });
    return overrun;
}

void post_device_event(emulated_device& device, ibv_event_type type, int port_num)
{
    device.for_each_context([&](device_context& context) {
        context.async_events().post_port(type, port_num);
    });
}

int inject(emulated_device& device, int fault)
{
    device_faults& faults = device.faults();
    const char* name = device.verbs()->name;
    switch (fault) {
    case SPEAD_EMU_FAULT_PORT_DOWN:
        warn("%s: port 1 down (injected): IBV_EVENT_PORT_ERR", name);
        faults.set_port_down(true);
        post_device_event(device, IBV_EVENT_PORT_ERR, 1);
        return 0;
    case SPEAD_EMU_FAULT_PORT_UP:
        warn("%s: port 1 up again (injected): IBV_EVENT_PORT_ACTIVE", name);
        faults.set_port_down(false);
        post_device_event(device, IBV_EVENT_PORT_ACTIVE, 1);
        return 0;
    case SPEAD_EMU_FAULT_QP_FATAL: {
        warn("%s: QPs to the error state (injected): IBV_EVENT_QP_FATAL", name);
        pending_events events;
        const int broken = break_queue_pairs(device, "an injected QP_FATAL", &events);
        post_after_delay(events);
        return broken > 0 ? 0 : ENOENT;
    }
    case SPEAD_EMU_FAULT_CQ_OVERRUN: {
        pending_events events;
        const int overrun = overrun_completion_queues(device, events);
        post_after_delay(events);
        return overrun > 0 ? 0 : ENOENT;
    }
    case SPEAD_EMU_FAULT_DEVICE_REMOVED:
        faults.set_removed();
        [[fallthrough]];
    case SPEAD_EMU_FAULT_DEVICE_FATAL: {
        warn("%s: %s (injected): IBV_EVENT_DEVICE_FATAL; verbs fail with EIO from now on",
             name,
             faults.removed() ? "device removed" : "fatal device error");
        // The event first, as the driver dispatches it before it flushes the queues;
        // with a delay, after (a reader's verbs fail before it can read the cause).
        const bool late = event_delay().count() > 0;
        if (!late)
            post_device_event(device, IBV_EVENT_DEVICE_FATAL, 0);
        faults.set_fatal();
        break_queue_pairs(device, "a fatal device error", nullptr);
        if (late) {
            pending_events events;
            device.for_each_context([&](device_context& context) {
                events.push_back({ &context.async_events(),
                                   IBV_EVENT_DEVICE_FATAL,
                                   reinterpret_cast<const void*>(std::uintptr_t(0)) });
            });
            post_after_delay(events);
        }
        return 0;
    }
    default:
        return EINVAL;
    }
}

} // namespace

void device_faults::set_frame_rates(double drop, double duplicate, double reorder)
{
    m_drop = threshold(drop);
    m_duplicate = threshold(duplicate);
    m_reorder = threshold(reorder);
}

frame_fate device_faults::next_frame_fate(uint64_t& random) const
{
    const uint32_t drop = m_drop.load(std::memory_order_relaxed);
    const uint32_t duplicate = m_duplicate.load(std::memory_order_relaxed);
    const uint32_t reorder = m_reorder.load(std::memory_order_relaxed);
    if ((drop | duplicate | reorder) == 0)
        return frame_fate::deliver; // the common case draws nothing
    if (drop != 0 && next_random(random) < drop)
        return frame_fate::drop;
    if (duplicate != 0 && next_random(random) < duplicate)
        return frame_fate::duplicate;
    if (reorder != 0 && next_random(random) < reorder)
        return frame_fate::hold;
    return frame_fate::deliver;
}

} // namespace spead_emu

extern "C" {

int spead_emu_inject_fault(const char* device_name, int fault)
{
    spead_emu::emulated_device* device = spead_emu::find_device(device_name);
    return device == nullptr ? ENODEV : spead_emu::inject(*device, fault);
}

int spead_emu_query_device_counters(const char* device_name, spead_emu_counters* counters)
{
    spead_emu::emulated_device* device = spead_emu::find_device(device_name);
    if (device == nullptr || counters == nullptr)
        return ENODEV;
    *counters = device->port_counters().snapshot();
    return 0;
}

int spead_emu_set_frame_faults(const char* device_name,
                               double drop,
                               double duplicate,
                               double reorder)
{
    spead_emu::emulated_device* device = spead_emu::find_device(device_name);
    if (device == nullptr)
        return ENODEV;
    for (double probability : { drop, duplicate, reorder })
        if (!(probability >= 0 && probability <= 1))
            return EINVAL;
    device->faults().set_frame_rates(drop, duplicate, reorder);
    return 0;
}

} // extern "C"
