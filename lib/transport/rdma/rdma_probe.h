/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What a connected rdma link needs of an interface, probed for spead_ibv_check.

#ifndef INCLUDED_SPEAD_TRANSPORT_RDMA_PROBE_H
#define INCLUDED_SPEAD_TRANSPORT_RDMA_PROBE_H

#include <gnuradio/spead/api.h>
#include <boost/asio/ip/address_v4.hpp>
#include <cstdint>
#include <string>

namespace gr {
namespace spead {
namespace rdma {

struct probe_report {
    bool cm_reachable = false; //!< rdma_cm binds the address (RDMA_PS_TCP)
    std::string cm_error;      //!< why not
    bool rc_supported = false; //!< an RC queue pair could be made
    std::string rc_error;
    std::uint32_t max_message = 0; //!< the port's max_msg_sz
    std::uint32_t max_inline = 0;  //!< granted to an RC QP asking for 1024 bytes
};

/*! Probes the verbs device that owns \p address; never throws. */
SPEAD_API probe_report probe(const boost::asio::ip::address_v4& address);

} // namespace rdma
} // namespace spead
} // namespace gr

#endif
