/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_LINK_ADMISSION_H
#define INCLUDED_SPEAD_TRANSPORT_LINK_ADMISSION_H

#include "connection.h"
#include "peer_filter.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/stats.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace gr {
namespace spead {
namespace link {

/*!
 * \brief Who gets one of a listener's connection slots, and when the listener is
 * asked: a connected_reader's door.
 *
 * A peer outside allowed_peers, or one beyond max_connections, is refused before its
 * connection gets anything (listener::accept() asks here first), counted in
 * connections_refused and logged once per address. A sender that comes while every
 * slot is taken waits up to full_grace for one to free (the listener is then not
 * polled, and holds that sender's data unacknowledged: listener::hold()), since a
 * sender that closes and reconnects at once may come before its old connection's end
 * is seen. An accept that fails for want of descriptors or memory is counted
 * (accept_failures) and logged once per burst, and the listener is not polled again
 * until a connection ends or accept_backoff passed: a waiting connection that cannot
 * be taken never makes the reader spin.
 */
class SPEAD_API admission
{
public:
    using steady = std::chrono::steady_clock;
    /*! How long a sender that comes while every slot is taken waits for one. */
    static constexpr std::chrono::seconds full_grace{ 1 };
    /*! How long the listener rests after an accept failed for want of resources. */
    static constexpr std::chrono::milliseconds accept_backoff{ 100 };

    /*! \p count counts a recv_stat (the reader's counters). */
    admission(listener& l,
              std::size_t max_connections,
              const std::string& allowed_peers,
              std::function<void(recv_stat)> count);

    /*!
     * The listener's fd to poll now (-1: not now) given \p open connections, and the
     * longest poll wait (ms) before asking again, at most \p timeout_ms.
     */
    int listener_fd(std::size_t open, int& timeout_ms);
    /*!
     * Takes the connections that wait and may come in, given \p open connections
     * (\p take adds one: open grows by one each time), until none waits or every slot
     * is taken. \throws std::system_error when the listener fails
     */
    void accept_waiting(std::size_t open,
                        const std::function<void(std::unique_ptr<incoming>,
                                                 const std::string& peer)>& take);
    /*! A connection ended, \p open are left: a slot may be free, and a listener
     * resting after a failed accept may try again. */
    void connection_ended(std::size_t open);

private:
    /*! The admit_function: true lets \p peer in (\p open slots taken). */
    bool admits(const boost::asio::ip::address& peer, std::size_t open);
    /*! A failed accept: counted, logged at the start of a burst, the listener rests. */
    void accept_failed(const accept_failure& e);
    /*! The listener holds new senders' data while every slot is taken. */
    void hold(bool held);

    listener& d_listener;
    std::size_t d_max_connections;
    peer_filter d_filter;
    std::function<void(recv_stat)> d_count;
    gr::logger d_logger;
    std::set<std::string> d_logged_refusals;
    bool d_held = false;
    /*! When a sender came while max_connections were open (see full_grace). */
    std::optional<steady::time_point> d_full_wait_start;
    /*! Until when the listener rests after a failed accept. */
    std::optional<steady::time_point> d_resting_until;
    std::uint64_t d_failures_in_burst = 0;
};

} // namespace link
} // namespace spead
} // namespace gr

#endif
