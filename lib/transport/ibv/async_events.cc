/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "async_events.h"

#include "device_binding.h"
#include <fcntl.h>
#include <poll.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace gr {
namespace spead {
namespace ibv {

namespace {

/*! Longest a per-batch take() goes without reading the fd. */
constexpr auto read_interval = std::chrono::milliseconds(1);

/*! One event as a watcher keeps it: the element is compared, never used. */
struct event_copy {
    ibv_event_type type;
    const void* element;
    int port_num;
};

event_copy copy_of(const ibv_async_event& event)
{
    event_copy copy{ event.event_type, nullptr, 0 };
    switch (event.event_type) {
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
        copy.port_num = event.element.port_num;
        break;
    case IBV_EVENT_CQ_ERR:
        copy.element = event.element.cq;
        break;
    case IBV_EVENT_WQ_FATAL:
        copy.element = event.element.wq;
        break;
    default:
        copy.element = event.element.qp;
        break;
    }
    return copy;
}

} // namespace

struct async_event_watch::watcher {
    int port_num = 1;
    std::vector<event_copy> pending; //!< guarded by the hub's mutex
    std::chrono::steady_clock::time_point last_read{};
};

/*! Reads one context's async fd for every watcher of it. */
struct async_event_watch::hub {
    ibv_context* context = nullptr;
    std::mutex mutex;
    std::vector<watcher*> watchers;

    /*! Every event waiting, acknowledged and copied to every watcher. */
    void read_locked()
    {
        ibv_async_event event;
        while (ibv_get_async_event(context, &event) == 0) {
            const event_copy copy = copy_of(event);
            ibv_ack_async_event(&event); // at once: destroying its object waits for it
            for (watcher* w : watchers)
                w->pending.push_back(copy);
        }
    }

    static std::shared_ptr<hub> for_context(ibv_context* context)
    {
        static std::mutex registry_mutex;
        static std::map<ibv_context*, std::weak_ptr<hub>> registry;
        std::lock_guard<std::mutex> lock(registry_mutex);
        if (auto existing = registry[context].lock())
            return existing;
        // Read until EAGAIN, never blocking (ibv_get_async_event(3) says to set it).
        const int flags = fcntl(context->async_fd, F_GETFL);
        if (flags < 0 || fcntl(context->async_fd, F_SETFL, flags | O_NONBLOCK) != 0)
            throw_error("fcntl(O_NONBLOCK) on the device's async event fd", errno);
        auto made = std::make_shared<hub>();
        made->context = context;
        registry[context] = made;
        return made;
    }
};

async_event_watch::async_event_watch(const device_binding& device)
    : d_hub(hub::for_context(device.context())), d_watcher(std::make_unique<watcher>())
{
    d_watcher->port_num = device.port_num();
    std::lock_guard<std::mutex> lock(d_hub->mutex);
    d_hub->watchers.push_back(d_watcher.get());
}

async_event_watch::~async_event_watch()
{
    std::lock_guard<std::mutex> lock(d_hub->mutex);
    auto& all = d_hub->watchers;
    all.erase(std::remove(all.begin(), all.end(), d_watcher.get()), all.end());
}

int async_event_watch::fd() const { return d_hub->context->async_fd; }

device_events async_event_watch::take(const ibv_qp* qp, const ibv_cq* cq, bool now)
{
    device_events out;
    const auto time = std::chrono::steady_clock::now();
    if (!now && time - d_watcher->last_read < read_interval)
        return out;
    d_watcher->last_read = time;
    std::lock_guard<std::mutex> lock(d_hub->mutex);
    d_hub->read_locked();
    for (const event_copy& event : d_watcher->pending) {
        switch (event.type) {
        case IBV_EVENT_PORT_ERR:
        case IBV_EVENT_PORT_ACTIVE:
            if (event.port_num != d_watcher->port_num)
                break;
            out.port_down = event.type == IBV_EVENT_PORT_ERR;
            (out.port_down ? out.port_errors : out.port_actives)++;
            break;
        case IBV_EVENT_DEVICE_FATAL:
            out.device_fatal = true;
            break;
        case IBV_EVENT_CQ_ERR:
            out.cq_error |= cq != nullptr && event.element == cq;
            break;
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR:
            out.qp_fatal |= qp != nullptr && event.element == qp;
            break;
        default:
            break; // not about a raw-packet QP's path (migration, SRQ, LID, ...)
        }
    }
    d_watcher->pending.clear();
    if (out.qp_fatal) {
        // Stale if an error completion already had the QP reset.
        ibv_qp_attr attr{};
        ibv_qp_init_attr init{};
        if (ibv_query_qp(const_cast<ibv_qp*>(qp), &attr, IBV_QP_STATE, &init) == 0 &&
            attr.qp_state != IBV_QPS_ERR)
            out.qp_fatal = false;
    }
    return out;
}

std::string device_fatal_message(const device_binding& device)
{
    const std::string name = device.device_name();
    bool listed = false;
    int n = 0;
    if (ibv_device** list = ibv_get_device_list(&n)) {
        for (int i = 0; i < n; i++)
            listed |= name == ibv_get_device_name(list[i]);
        ibv_free_device_list(list);
    }
    if (!listed)
        return "the RDMA device " + name + " (" + device.interface_name() +
               ") was removed (IBV_EVENT_DEVICE_FATAL, and it is no longer listed): "
               "the stream ends. When the device is back (driver reloaded, VF "
               "re-attached), check it with spead_ibv_check and make the stream again";
    return "the RDMA device " + name + " (" + device.interface_name() +
           ") reported a fatal error (IBV_EVENT_DEVICE_FATAL): every verb now fails "
           "and the stream ends. Look in the kernel log (dmesg) for the driver's "
           "reason; the device recovers only by a reset (driver reload or reboot), "
           "after which check it with spead_ibv_check and make the stream again";
}

void end_stream_if_unrecoverable(const device_events& events,
                                 const device_binding& device,
                                 const char* queue_name)
{
    if (events.device_fatal)
        throw device_failure(device_fatal_message(device));
    if (events.cq_error)
        throw device_failure(
            std::string("the completion queue of the ") + queue_name + " on " +
            device.device_name() +
            " overran (IBV_EVENT_CQ_ERR): completions were lost and it cannot be used "
            "again; the stream ends. The CQ has room for every posted work request, so "
            "this is a driver or device fault: check dmesg and spead_ibv_check, and "
            "make the stream again");
}

std::string explain_failure(async_event_watch& watch,
                            const device_binding& device,
                            const ibv_qp* qp,
                            const ibv_cq* cq,
                            const char* queue_name,
                            const std::string& failure,
                            std::chrono::milliseconds wait)
{
    const auto until = std::chrono::steady_clock::now() + wait;
    for (;;) {
        // take() also finds events another watcher of the context already read.
        const device_events events = watch.take(qp, cq, true);
        try {
            end_stream_if_unrecoverable(events, device, queue_name);
        } catch (const device_failure& cause) {
            return std::string(cause.what()) +
                   " (the verb that failed first: " + failure + ")";
        }
        if (events.qp_fatal)
            return std::string("the ") + queue_name + " on " + device.device_name() +
                   " went to the error state (IBV_EVENT_QP_FATAL) and " + failure +
                   "; check dmesg and spead_ibv_check, and make the stream again";
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return failure;
        // Short waits: another watcher may read the fd first (take() then has it).
        pollfd pfd{ watch.fd(), POLLIN, 0 };
        ::poll(&pfd, 1, int(std::min<long long>(left.count(), 10)));
    }
}

void log_port_changes(const device_events& events,
                      const device_binding& device,
                      gr::logger& logger,
                      const char* activity)
{
    if (events.port_errors > 0)
        logger.warn("port {} of {} ({}) went down (IBV_EVENT_PORT_ERR): frames on the "
                    "wire meanwhile are lost, and the NIC cannot count them; {} resumes "
                    "when the link is up (check the cable, the switch port, and "
                    "`ip link`)",
                    int(device.port_num()),
                    device.device_name(),
                    device.interface_name(),
                    activity);
    if (events.port_actives > 0 && !events.port_down)
        logger.info("port {} of {} is up again (IBV_EVENT_PORT_ACTIVE): {}",
                    int(device.port_num()),
                    device.device_name(),
                    activity);
}

} // namespace ibv
} // namespace spead
} // namespace gr
