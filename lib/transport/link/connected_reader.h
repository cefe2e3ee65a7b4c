/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_LINK_CONNECTED_READER_H
#define INCLUDED_SPEAD_TRANSPORT_LINK_CONNECTED_READER_H

#include "admission.h"
#include "common/file_descriptor.h"
#include "connection.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/listen_config_base.h>
#include <gnuradio/spead/recv_reader.h>
#include <gnuradio/spead/stats.h>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace link {

/*! The limits a listening receiver enforces (from the transport's config). */
struct reader_limits {
    std::size_t max_connections = 1;
    std::size_t max_packet_size = 65536;
    bool keep_listening = false;
    /*! The longest a connection may go without progress (0: no limit): from its
     * accept to its first whole packet, and from the start of a packet to its end. */
    std::chrono::milliseconds idle_timeout{ 0 };
    std::string allowed_peers;
};

/*! The limits of a listening config (recv::tcp_config, recv::rdma_config). */
template <typename Derived>
reader_limits limits_of(const listen_config_base<Derived>& c)
{
    return { c.get_max_connections(),
             c.get_max_packet_size(),
             c.get_keep_listening(),
             c.get_idle_timeout(),
             c.get_allowed_peers() };
}

/*! Where a connected_reader's packets go: the reader's protected calls. */
class SPEAD_API packet_sink
{
public:
    virtual ~packet_sink() = default;
    virtual bool add_packets(const recv::packet_view* packets, std::size_t n) = 0;
    /*! A batch of connection slot \p slot's (below max_connections): a sink that
     * assembles each connection's heaps apart (its own heap cnts) overrides this and
     * connection_ended(); by default every connection feeds one assembly. */
    virtual bool
    add_packets_from(std::size_t slot, const recv::packet_view* packets, std::size_t n)
    {
        (void)slot;
        return add_packets(packets, n);
    }
    /*! Connection slot \p slot's connection has ended (its partial heaps may go). */
    virtual void connection_ended(std::size_t slot) { (void)slot; }
    virtual std::size_t wait_for_queue_space(std::chrono::microseconds timeout) = 0;
    /*! The stream is stopping or has ended: the reader ends every connection. When
     * add_packets_from() refuses a batch while this is false, that connection's sender
     * said stop (a continuous stream's stop heap ends only its sender): it alone ends. */
    virtual bool stopping() const = 0;
};

/*!
 * \brief The receive half of the connected-link layer: one loop serving a listener and
 * up to max_connections connections, shared by every connected transport.
 *
 * Admission (allowed_peers, max_connections, accept failures: admission.h),
 * per-connection endings (a connection that breaks a limit or the framing ends alone,
 * counted and logged), endings for want of progress and dead peers, and
 * back-pressure: a batch goes to the stream only when its queue has room, so a full
 * queue stops the reading and the transport slows the senders. Packets go to the
 * stream where the connection holds them (its buffer, or the memory the NIC wrote)
 * and are released after: no copy here.
 * Each connection has a slot (the lowest free, below max_connections) that names it
 * to the sink, so that each is assembled as the SPEAD sender it is.
 *
 * No slot without progress (idle_timeout): a connection that sends no whole packet
 * within idle_timeout of its accept ends as connections_idle_timeout, one that begins
 * a packet and does not finish it within idle_timeout as connections_partial_frame.
 * A sender idle between whole packets is not cut (peer_timeout finds dead ones). Time
 * in which the reader itself waited for queue space (back-pressure) does not count.
 */
class SPEAD_API connected_reader
{
public:
    connected_reader(std::unique_ptr<listener> l, const reader_limits& limits);
    ~connected_reader();

    /*! Serves until the sink is stopping, or (without keep_listening) the last
     * connection has ended. \throws std::system_error when the listener fails */
    void run(packet_sink& sink);
    /*! Ends a wait in run() at once (any thread). */
    void wake();

    recv_stats stats() const;
    std::size_t num_connections() const { return d_open.load(); }

private:
    struct conn;
    enum class ending { closed, lost, framing, too_large, partial, idle, stopped };

    /*! Adds an admitted connection from \p peer. */
    void take(std::unique_ptr<incoming> in, const std::string& peer);
    /*! The lowest slot no open connection has. */
    std::size_t free_slot() const;
    /*! Ends the connections without progress for idle_timeout (see the class). */
    void end_stalled();
    /*! Hands on the packets the connection has, then releases them; false once the
     * stream is stopping. */
    bool service(conn& c, packet_sink& sink);
    /*! \p c's receive() gave \p result (0 or -errno): \p c ends by that cause. */
    void end_by(conn& c, std::ptrdiff_t result);
    std::size_t index_of(const conn& c) const;
    /*! Hands \p n packets of \p c's on; false once the stream is stopping. When \p c's
     * sender said stop, ends \p c and sets \p ended (c is then gone). */
    bool deliver(conn& c,
                 const recv::packet_view* views,
                 const bool* run_starts,
                 std::size_t n,
                 packet_sink& sink,
                 bool& ended);
    void end(std::size_t index, ending why, const std::string& detail);
    void count(recv_stat s);

    packet_sink* d_sink = nullptr; //!< run()'s
    std::unique_ptr<listener> d_listener;
    reader_limits d_limits;
    admission d_admission;
    std::vector<std::unique_ptr<conn>> d_conns;
    bool d_conns_changed = true; //!< run() rebuilds its poll list
    file_descriptor d_wake;
    gr::logger d_logger;
    bool d_accepted_any = false;
    /*! Time the reader waited for queue space, summed: not counted against a
     * connection's progress. */
    std::chrono::steady_clock::duration d_stalled{ 0 };
    std::atomic<std::size_t> d_open{ 0 };
    mutable std::mutex d_stats_mutex;
    recv_stats d_stats;
};

} // namespace link
} // namespace spead
} // namespace gr

#endif
