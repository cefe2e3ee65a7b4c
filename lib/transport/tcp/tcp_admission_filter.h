/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_TCP_ADMISSION_FILTER_H
#define INCLUDED_SPEAD_TRANSPORT_TCP_ADMISSION_FILTER_H

#include "transport/link/peer_filter.h"
#include <gnuradio/spead/api.h>
#include <linux/filter.h>
#include <vector>

namespace gr {
namespace spead {
namespace transport {

/*!
 * A classic BPF socket filter for a listening TCP socket that drops the segments
 * carrying data (not the handshake, acknowledgments or FIN) from peers outside
 * \p allowed, or from every peer when \p everyone: their kernel never acknowledges
 * those bytes, so a sender that is refused later has counted nothing as delivered.
 * Accepted sockets inherit the listener's filter until admit() removes it.
 */
SPEAD_API std::vector<sock_filter> data_hold_program(const peer_filter& allowed,
                                                     bool everyone);

/*!
 * \brief What a listening TCP socket's kernel acknowledges before the reader admits a
 * connection: the data of peers outside allowed_peers never, and while every slot is
 * taken (hold()), nobody's.
 *
 * A connection's handshake completes in the kernel before accept(), and with it the
 * kernel would acknowledge the first bytes its peer sends, which the reader then
 * discards if it refuses the peer. With a filter on the listener (inherited by each
 * connection it makes) those bytes are dropped instead: the sender retransmits them
 * once admitted, or sees the connection refused with nothing acknowledged. Without
 * allowed_peers and while slots are free no filter runs at all.
 */
class SPEAD_API admission_filter
{
public:
    /*! For the listening socket \p listen_fd. \throws std::system_error */
    admission_filter(int listen_fd, const peer_filter& allowed);

    /*! \p held: every peer's data waits for admission (every slot is taken); else
     * only that of peers outside allowed_peers. \throws std::system_error */
    void hold(bool held);
    /*! The accepted connection \p fd is admitted: its data flows. */
    void admit(int fd) const;

private:
    void attach(const std::vector<sock_filter>* program);

    int d_fd;
    std::vector<sock_filter> d_outsiders; //!< empty: allowed_peers admits everyone
    std::vector<sock_filter> d_everyone;
    const std::vector<sock_filter>* d_attached = nullptr;
    bool d_ever_attached = false; //!< accepted sockets may have inherited one
};

} // namespace transport
} // namespace spead
} // namespace gr

#endif
