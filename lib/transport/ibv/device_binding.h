/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_DEVICE_BINDING_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_DEVICE_BINDING_H

#include "transport/raw_packet.h"
#include "verbs.h"
#include <gnuradio/spead/api.h>
#include <infiniband/verbs.h>
#include <boost/asio/ip/address_v4.hpp>
#include <cstdint>
#include <string>

namespace gr {
namespace spead {
namespace ibv {

/*!
 * \brief The RDMA device and port that own an interface, found the way rdma_cm does
 * it: rdma_create_id + rdma_bind_addr(interface IPv4). The ibv_context belongs to
 * rdma_cm and lives as long as this object.
 */
class SPEAD_API device_binding
{
public:
    /*! \throws std::system_error naming the interface when no RDMA device owns it */
    explicit device_binding(const boost::asio::ip::address_v4& interface_address);

    ibv_context* context() const { return d_id->verbs; }
    std::uint8_t port_num() const { return d_id->port_num; }
    const boost::asio::ip::address_v4& interface_address() const { return d_address; }
    /*! netdev name of the interface (for MAC, MTU and messages) */
    const std::string& interface_name() const { return d_interface_name; }
    const mac_address& interface_mac() const { return d_interface_mac; }

    ibv_device_attr query_device() const;
    ibv_device_attr_ex query_device_ex() const;
    ibv_port_attr query_port() const;
    bool has_flow_steering() const;
    bool has_ip_checksum_offload() const;
    /*! Completion vectors (interrupt queues) of the device, at least 1. */
    int num_comp_vectors() const;
    /*! rdma-core's name of the device ("mlx5_0"). */
    std::string device_name() const;
    /*! sysfs file of a port counter of this port:
     * `<ibdev_path>/ports/<port>/hw_counters/<counter>`, e.g. out_of_buffer. */
    std::string port_counter_path(const std::string& counter) const;

private:
    boost::asio::ip::address_v4 d_address;
    std::string d_interface_name;
    mac_address d_interface_mac{};
    cm_id_ptr d_id;
};

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
