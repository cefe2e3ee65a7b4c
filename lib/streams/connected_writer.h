/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_CONNECTED_WRITER_H
#define INCLUDED_SPEAD_STREAMS_CONNECTED_WRITER_H

#include "connection.h"
#include "packet_writer.h"
#include "transport/file_descriptor.h"
#include <gnuradio/logger.h>
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

/*!
 * \brief The send half of the connected-link layer, shared by every connected
 * transport: a packet_writer over a connection a dialer makes.
 *
 * Writes a batch back to back (spead2's framing), waiting while the connection is
 * full (back-pressure: send_waits, send_wait_us) rather than failing. A failed
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
 * with heaps pending, in short timed polls). When the connection is lost, packets
 * written but not acknowledged complete with its error: their heaps count as failed
 * and lost in flight, never as sent. After abort(), acknowledgment is awaited for at
 * most 2 s without progress, then the rest is counted lost.
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
    /*! Writes every byte of \p iov: 0, or the errno that failed the connection
     * (ECANCELED: abort() and no progress for 2 s). */
    int write_all(iovec* iov, int n, std::size_t& written);
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
    /*! Waits up to \p timeout_ms for \p events on the connection (counted in
     * send_wait_us); false once the stream is being destroyed and nothing moved for
     * 2 s since \p last_progress (the caller drops the link). */
    bool wait_for_room(short events,
                       int timeout_ms,
                       std::chrono::steady_clock::time_point last_progress);
    /*! write_packets() for a message-form connection: one message per packet. */
    std::size_t write_messages(message_outgoing& m,
                               const send::packet* packets,
                               std::size_t n,
                               boost::system::error_code& ec);
    /*! Drops the connection: what it acknowledged is done, the rest lost with \p ec. */
    void drop_link(const boost::system::error_code& ec);
    /*! Notes the end offsets of \p n packets just written, from \p offset. */
    void record_written(const send::packet* packets, std::size_t n, std::uint64_t offset);
    /*! Advances d_settled from the connection's acknowledgment; true on progress. */
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
    transport::file_descriptor d_abort;
    std::vector<iovec> d_iov;
    // Acknowledgment (writer thread). Packets are numbered from 0 over all connections;
    // those in [d_acked, d_written) belong to the current connection.
    std::uint64_t d_written = 0;   //!< packets accepted by write_packets()
    std::uint64_t d_settled = 0;   //!< of those, acknowledged or lost
    std::uint64_t d_ok_upto = 0;   //!< acknowledged, to report without error
    std::uint64_t d_lost_upto = 0; //!< then lost (not acknowledged), to report with:
    boost::system::error_code d_lost_ec; //!< the loss that lost them
    std::uint64_t d_reported = 0;        //!< returned by reap_completions()
    std::uint64_t d_link_bytes = 0;      //!< bytes written on the current connection
    /*! Ring (power-of-two size) of end offsets on the connection of packets
     * [d_settled, d_written), indexed by packet number; grows, never shrinks. */
    std::vector<std::uint64_t> d_ends = std::vector<std::uint64_t>(1024);
    std::chrono::steady_clock::time_point d_ack_progress; //!< last acknowledgment
    std::chrono::microseconds d_ack_sleep{ 0 };           //!< idle poll, grows
    bool d_slack_set = false; //!< the writer thread's timer slack is 1 us
    gr::logger d_logger;
};

} // namespace link
} // namespace spead
} // namespace gr

#endif
