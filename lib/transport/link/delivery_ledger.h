/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_LINK_DELIVERY_LEDGER_H
#define INCLUDED_SPEAD_TRANSPORT_LINK_DELIVERY_LEDGER_H

#include "protocol/packet_writer.h"
#include <gnuradio/spead/api.h>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace spead {
namespace link {

/*!
 * \brief A connected writer's account of its packets: written, then acknowledged by
 * the peer (sent) or lost with their connection, reported to the stream in order.
 *
 * Packets are numbered from 0 over every connection; those not settled yet belong to
 * the current connection, whose acknowledgment is told in bytes (what the transport
 * knows: tcp's SIOCOUTQ, rdma's completions). A packet counts as sent only once all
 * its bytes are acknowledged; when the connection is lost, the packets it had not
 * acknowledged are reported with the loss's error, after those it had. No I/O.
 */
class SPEAD_API delivery_ledger
{
public:
    /*! \p n packets were written on the current connection, after those before. */
    void written(const send::packet* packets, std::size_t n);
    /*! The current connection has all but \p unacknowledged bytes of what was written
     * on it acknowledged: true when that settled a packet. */
    bool acknowledged(std::uint64_t unacknowledged);
    /*! The current connection is gone: what it acknowledged is sent, the rest lost
     * with \p ec; the next connection starts from byte 0. */
    void connection_lost(const boost::system::error_code& ec);
    /*!
     * Packets done, of \p written handed to the writer, for reap_completions(): those
     * acknowledged; then, in a later call, those lost (with \p ec set to the loss's
     * error), so that each report is all sent or all failed.
     */
    std::uint64_t report(boost::system::error_code& ec, std::uint64_t written);

    /*! Packets written and not yet acknowledged or lost. */
    std::uint64_t unsettled() const { return d_written - d_settled; }
    /*! When a packet last settled, or the wait for the first began. */
    std::chrono::steady_clock::time_point last_progress() const { return d_progress; }

private:
    std::uint64_t d_written = 0;   //!< packets written
    std::uint64_t d_settled = 0;   //!< of those, acknowledged or lost
    std::uint64_t d_ok_upto = 0;   //!< acknowledged, to report without error
    std::uint64_t d_lost_upto = 0; //!< then lost (not acknowledged), to report with:
    boost::system::error_code d_lost_ec; //!< the loss that lost them
    std::uint64_t d_reported = 0;        //!< returned by report()
    std::uint64_t d_link_bytes = 0;      //!< bytes written on the current connection
    /*! Ring (power-of-two size) of end offsets on the connection of packets
     * [d_settled, d_written), indexed by packet number; grows, never shrinks. */
    std::vector<std::uint64_t> d_ends = std::vector<std::uint64_t>(1024);
    std::chrono::steady_clock::time_point d_progress;
};

} // namespace link
} // namespace spead
} // namespace gr

#endif
