/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_LINK_CONNECTED_WRITER_H
#define INCLUDED_SPEAD_TRANSPORT_LINK_CONNECTED_WRITER_H

#include "common/file_descriptor.h"
#include "connection.h"
#include "delivery_ledger.h"
#include "protocol/packet_writer.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/dial_config_base.h>
#include <condition_variable>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gr {
namespace spead {
namespace link {

/*! What a connecting sender does about failures (from the transport's config). */
struct writer_settings {
    std::chrono::milliseconds connect_timeout{ 5000 };
    bool reconnect = false;
    std::chrono::milliseconds reconnect_min{ 100 };
    std::chrono::milliseconds reconnect_max{ 5000 };
};

/*! The settings of a connecting config (send::tcp_config, send::rdma_config). */
template <typename Derived>
writer_settings settings_of(const dial_config_base<Derived>& c)
{
    return { c.get_connect_timeout(),
             c.get_reconnect(),
             c.get_reconnect_min(),
             c.get_reconnect_max() };
}

/*!
 * \brief The send half of the connected-link layer, shared by every connected
 * transport: a packet_writer over a connection a dialer makes.
 *
 * Hands a batch to the connection (outgoing::send(): tcp writes it back to back in
 * one sendmsg(), rdma posts a message per packet), waiting while the connection has
 * no room (back-pressure: send_waits, send_wait_us) rather than failing. A failed
 * connection fails the batch from the packet it cut (connections_lost, logged once
 * with cause and fix); without reconnect, every later batch fails at once.
 *
 * With reconnect, a connector thread of the writer's own connects from the start
 * (connect_first()) and again after every loss, in the background, with a back-off
 * doubling from reconnect_min to reconnect_max; is_connected() tells a producer
 * when heaps can go, and a batch that finds no connection waits for the next one.
 * abort() (the stream is being destroyed) ends a connection attempt, a back-off or
 * a wait for a connection at once, and a wait for room after 2 s without progress.
 *
 * A packet is done (its heap counts as sent) only once the peer acknowledged all its
 * bytes (outgoing::unacknowledged(), asked once per batch and, while the stream idles
 * with heaps pending, in short timed polls; the account is a delivery_ledger). When
 * the connection is lost, packets written but not acknowledged complete with its
 * error: their heaps count as failed and lost in flight, never as sent. After abort(),
 * acknowledgment is awaited for at most 2 s without progress, then the rest is
 * counted lost.
 */
class SPEAD_API connected_writer : public send::packet_writer
{
public:
    connected_writer(std::unique_ptr<dialer> d, const writer_settings& settings);
    ~connected_writer() override;

    /*! The first connection, once the stream counts (from the stream's constructor);
     * with reconnect on, starts the connector thread, which connects in the background.
     * \throws std::system_error when it fails and reconnect is off */
    void connect_first();
    /*! Cuts every wait short (any thread). */
    void abort();

    std::size_t write_packets(const send::packet* packets,
                              std::size_t n,
                              boost::system::error_code& ec) override;
    /*! Packets acknowledged by the peer (or lost: then \p ec is the loss's error). */
    std::uint64_t reap_completions(bool wait,
                                   boost::system::error_code& ec,
                                   std::uint64_t written) override;

    /*! The keepalive period: idle() is called this often while the stream idles. */
    std::chrono::milliseconds idle_period() const override;
    /*! Asks the connection whether its peer still answers (outgoing::keep_alive());
     * a loss is counted and logged as one while idle, and dropped. */
    void idle() override;

    bool is_connected() const { return d_connected.load(); }
    std::size_t granted_buffer() const;

private:
    /*! Tries to connect once; nullptr (counted, logged) on failure.
     * \throws std::system_error on failure when reconnect is off */
    std::unique_ptr<outgoing> try_connect(bool log_failure);
    /*! The connector thread: connects whenever asked to, with back-off, until abort. */
    void connector_loop();
    /*! Makes sure there is a connection, waiting for the connector's next one with
     * reconnect; false when the stream must fail. */
    bool ensure_connected();
    /*! The connection failed with \p err: counted, logged (unless link_gone() did),
     * dropped. */
    void lose(int err);
    /*! Has \p link watch for its peer's end while the writer idles (outgoing::watch).
     */
    void watch(outgoing& link);
    /*! \p link's peer went (its own thread): counted and logged at once, is_connected()
     * false, the connector woken; the writer thread drops it at its next batch. */
    void link_gone(const outgoing* link, int err);
    /*! The writer thread: drops a connection link_gone() reported. */
    void take_idle_loss();
    /*! Waits for room on the connection (outgoing::room_events(), counted in
     * send_wait_us); false once the stream is being destroyed and nothing moved for
     * 2 s since \p last_progress (the caller drops the link). */
    bool wait_for_room(std::chrono::steady_clock::time_point last_progress);
    /*! Drops the connection: what it acknowledged is done, the rest lost with \p ec. */
    void drop_link(const boost::system::error_code& ec);
    /*! Asks the connection what it acknowledged; true when a packet settled. */
    bool update_acked();
    /*! Waits briefly for acknowledgment or failure of the connection (idle writer). */
    void wait_for_ack();

    std::unique_ptr<dialer> d_dialer;
    writer_settings d_settings;
    std::unique_ptr<outgoing> d_link; //!< the writer thread's connection
    /*! Guards d_link's replacement (vs granted_buffer()), d_ready and d_wanted. */
    mutable std::mutex d_link_mutex;
    std::condition_variable d_link_changed;
    std::unique_ptr<outgoing> d_ready; //!< made by the connector, not yet taken
    bool d_wanted = false;             //!< the connector should connect
    bool d_loss_noted = false;         //!< d_link's loss is counted and logged
    /*! errno of d_link's loss seen by link_gone(), for the writer thread; 0 if none. */
    std::atomic<int> d_idle_loss{ 0 };
    std::thread d_connector; //!< with reconnect only
    std::atomic<bool> d_connected{ false };
    std::atomic<bool> d_aborted{ false };
    bool d_ever_connected = false;
    bool d_failed_for_good = false;
    file_descriptor d_abort;
    delivery_ledger d_ledger;                   //!< the writer thread's
    std::chrono::microseconds d_ack_sleep{ 0 }; //!< idle poll for acknowledgment, grows
    bool d_slack_set = false; //!< the writer thread's timer slack is 1 us
    gr::logger d_logger;
};

} // namespace link
} // namespace spead
} // namespace gr

#endif
