/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What the device reports on its context's async event fd (ibv_get_async_event(3)):
// the port going down and up, a QP or CQ failing, the device failing or going away.
// A context is shared by every reader and sender of the process on that device
// (rdma_cm hands out one per device), so the fd is read by one hub per context, which
// acknowledges each event at once and hands a copy to every watcher: no watcher can
// steal another's events. Watchers ask once per batch (take()), never per packet; the
// fd can also be polled (fd()) next to a completion channel.

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_ASYNC_EVENTS_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_ASYNC_EVENTS_H

#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <infiniband/verbs.h>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace ibv {

class device_binding;

/*! What happened to one watcher's port and objects since it last asked. */
struct device_events {
    std::uint64_t port_errors = 0;  //!< IBV_EVENT_PORT_ERR on the watched port
    std::uint64_t port_actives = 0; //!< IBV_EVENT_PORT_ACTIVE on the watched port
    bool port_down = false;         //!< after these events, the port is down
    bool qp_fatal = false;     //!< the watched QP went to (and is in) the error state
    bool cq_error = false;     //!< the watched CQ overran (IBV_EVENT_CQ_ERR)
    bool device_fatal = false; //!< IBV_EVENT_DEVICE_FATAL: the device is gone

    bool any() const
    {
        return port_errors || port_actives || qp_fatal || cq_error || device_fatal;
    }
};

class SPEAD_API async_event_watch
{
public:
    /*! Watches \p device's context and port. \throws std::system_error */
    explicit async_event_watch(const device_binding& device);
    ~async_event_watch();
    async_event_watch(const async_event_watch&) = delete;
    async_event_watch& operator=(const async_event_watch&) = delete;

    /*! The context's async fd (non-blocking): readable when events wait. */
    int fd() const;
    /*! The events since the last call that concern the port, \p qp or \p cq (either
     * may be nullptr). Reads the fd at most once a millisecond unless \p now (the
     * caller saw it readable), so a per-batch call costs a clock read. */
    device_events take(const ibv_qp* qp, const ibv_cq* cq, bool now = false);

private:
    struct hub;
    struct watcher;
    std::shared_ptr<hub> d_hub;
    std::unique_ptr<watcher> d_watcher;
};

/*! Why the device stopped and what to do, for a stream that ends on
 * IBV_EVENT_DEVICE_FATAL: removed (no longer listed) or failed. */
SPEAD_API std::string device_fatal_message(const device_binding& device);

/*! What ends a stream because of the device: its message names the cause (the async
 * event) and the fix. */
class SPEAD_API device_failure : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

/*! Ends the stream (throws device_failure with the cause and the fix) for what no
 * reset brings back: a fatal or removed device, an overrun CQ of \p queue_name. */
SPEAD_API void end_stream_if_unrecoverable(const device_events& events,
                                           const device_binding& device,
                                           const char* queue_name);

/*!
 * A verb on \p qp or \p cq failed with \p failure: the cause the device reports, read
 * from its async events before the verb is named, since the event may come after the
 * failure a polling thread saw (the driver raises it while the CQ is already broken).
 * Waits up to \p wait for an event about the device, \p qp or \p cq. \return the
 * message that ends the stream: the event's cause and fix (CQ overrun, device fatal
 * or removed, QP fatal) with \p failure after it, or \p failure alone when no event
 * came.
 */
SPEAD_API std::string explain_failure(async_event_watch& watch,
                                      const device_binding& device,
                                      const ibv_qp* qp,
                                      const ibv_cq* cq,
                                      const char* queue_name,
                                      const std::string& failure,
                                      std::chrono::milliseconds wait);

/*! The log's lines for the port going down (warning) and up (info); \p activity is
 * what resumes ("receiving"). */
SPEAD_API void log_port_changes(const device_events& events,
                                const device_binding& device,
                                gr::logger& logger,
                                const char* activity);

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
