/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The multicast groups of an ibverbs receiver, joined through ordinary kernel sockets:
// the NIC steers the frames by flow, but only the kernel tells the switch (IGMP) that
// this host wants them. The groups are left when the sockets close.

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_MULTICAST_MEMBERSHIPS_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_MULTICAST_MEMBERSHIPS_H

#include "common/file_descriptor.h"
#include "device_binding.h"
#include <gnuradio/spead/api.h>
#include <boost/asio/ip/udp.hpp>
#include <vector>

namespace gr {
namespace spead {
namespace ibv {

class SPEAD_API multicast_memberships
{
public:
    multicast_memberships() = default;
    /*! Joins every multicast group among \p endpoints on the device's interface.
     * \throws std::system_error naming the group and interface */
    multicast_memberships(const device_binding& device,
                          const std::vector<boost::asio::ip::udp::endpoint>& endpoints);

private:
    std::vector<file_descriptor> d_sockets;
};

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
