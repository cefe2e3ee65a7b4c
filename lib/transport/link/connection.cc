/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "connection.h"
#include <cerrno>

namespace gr {
namespace spead {
namespace link {

std::string incoming::describe_ending(std::ptrdiff_t result) const
{
    switch (-result) {
    case EBADMSG:
        return "it sent something that is not a SPEAD packet: is it a SPEAD sender?";
    case EMSGSIZE:
        return "it sent a packet above max_packet_size: raise max_packet_size to the "
               "sender's packet size";
    case EPROTO:
        return "it broke the link's protocol: is it a gr-spead sender of this version?";
    default:
        return "the peer closed it in the middle of a packet: the sender stopped "
               "abruptly";
    }
}

std::string connection_advice(int err)
{
    switch (err) {
    case ECONNREFUSED:
        return "nothing listens there: start the receiver first, or check the port";
    case ETIMEDOUT:
        return "the peer stopped answering (link down, host gone or a firewall "
               "dropping packets): check the link; peer_timeout sets how long this takes";
    case ECONNRESET:
    case EPIPE:
        return "the peer closed the connection abruptly (its process ended or it "
               "refused the data): see the peer's log";
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
        return "no route to the peer: check the address, the interface and the link";
    case EMFILE:
        return "the process is out of file descriptors: raise its limit (ulimit -n, "
               "LimitNOFILE= in a unit) or lower max_connections";
    case ENFILE:
        return "the system is out of file descriptors: raise fs.file-max, or close "
               "other programs' files";
    case ENOMEM:
    case ENOBUFS:
        return "the host is short of memory (rdma: of locked memory, ulimit -l): lower "
               "max_connections or the buffers, or give the process more";
    default:
        return "check the peer and the network between them";
    }
}

} // namespace link
} // namespace spead
} // namespace gr
