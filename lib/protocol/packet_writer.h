/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_PACKET_WRITER_H
#define INCLUDED_SPEAD_PROTOCOL_PACKET_WRITER_H

#include "protocol/packetiser.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/stats.h>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace gr {
namespace spead {
namespace send {

class stream;

/*! One SPEAD packet for a transport: pieces (header first) and destination. */
struct packet {
    const packet_piece* pieces;
    std::size_t n_pieces;
    std::size_t size;
    std::size_t substream;
};

/*!
 * \brief The transport half of a send stream: puts packets on the wire (kernel
 * sockets, an ibverbs queue pair, a capture file).
 *
 * A send::stream owns its writer and calls it from its writer thread only. The stream
 * starts that thread once the writer exists and joins it before the writer is
 * destroyed, so a writer needs no thread code and no ordering rules.
 *
 * The seam between the send stream (lib/streams) and the transports (lib/transport),
 * so it lives below both; header-only, since it is an interface and lib/protocol's
 * sources are compiled into the fuzzer too.
 */
class SPEAD_API packet_writer
{
public:
    virtual ~packet_writer() = default;

    /*!
     * Writes \p n packets. May return before the transport is done with the packets'
     * memory (asynchronous NICs); sets \p ec on failure.
     * \return packets accepted; the rest of the batch counts as failed.
     */
    virtual std::size_t write_packets(const packet* packets,
                                      std::size_t n,
                                      boost::system::error_code& ec) = 0;

    /*!
     * Packets written so far that the transport is done with (their memory may be
     * reused), of \p written accepted by write_packets(). Synchronous transports keep
     * the default (all of them). With \p wait, blocks until all written packets are
     * done. Errors found on completion go to \p ec.
     */
    virtual std::uint64_t
    reap_completions(bool wait, boost::system::error_code& ec, std::uint64_t written)
    {
        (void)wait;
        (void)ec;
        return written; // synchronous: done with a packet once write_packets() returns
    }

    /*!
     * How often the stream calls idle() while it has no heap to send; zero (the
     * default): never.
     */
    virtual std::chrono::milliseconds idle_period() const
    {
        return std::chrono::milliseconds(0);
    }
    /*!
     * The stream had no heap to send for idle_period(): a connected transport checks
     * here that its peer still answers (a keepalive), so that a dead connection is
     * seen while nothing is sent. From the writer thread.
     */
    virtual void idle() {}

protected:
    /*! Adds to the stream's counters (e.g. packets_zero_copy). */
    void count(send_stat s, std::uint64_t n)
    {
        if (d_count)
            d_count(s, n);
    }
    /*!
     * The transport can never send again (the device died or went away): \p cause
     * names it and the fix. The stream counts it (writer_errors), logs it once and
     * reports it (stream::has_failed()), so that its user ends; the writer itself
     * fails every later write. Called from the writer thread, once.
     */
    void failure(const std::string& cause)
    {
        if (d_failure)
            d_failure(cause);
    }

private:
    friend class stream;
    std::function<void(send_stat, std::uint64_t)> d_count;
    std::function<void(const std::string&)> d_failure;
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_PACKET_WRITER_H */
