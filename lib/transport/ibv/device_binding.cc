/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "device_binding.h"
#include "transport/network_interface.h"
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace spead {
namespace ibv {

namespace {

mac_address read_interface_mac(const std::string& name)
{
    mac_address mac{};
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return mac;
    ifreq request{};
    std::strncpy(request.ifr_name, name.c_str(), IFNAMSIZ - 1);
    if (ioctl(fd, SIOCGIFHWADDR, &request) == 0)
        std::memcpy(mac.data(), request.ifr_hwaddr.sa_data, mac.size());
    close(fd);
    return mac;
}

std::string no_device_message(const boost::asio::ip::address_v4& address,
                              const std::string& name)
{
    return "no RDMA device owns interface " + address.to_string() +
           (name.empty() ? "" : " (" + name + ")") +
           ". ibverbs needs a NIC whose driver provides verbs (Mellanox/NVIDIA ConnectX "
           "with rdma-core's mlx4/mlx5 providers); check `ibv_devices` and `rdma link "
           "show`, or use transport udp (auto falls back to it)";
}

} // namespace

device_binding::device_binding(const boost::asio::ip::address_v4& interface_address)
    : d_address(interface_address)
{
    try {
        d_interface_name =
            transport::resolve_interface(interface_address.to_string(), "interface").name;
    } catch (const std::invalid_argument&) {
        // Not a local address: rdma_bind_addr below reports it with the RDMA context.
    }
    if (!d_interface_name.empty())
        d_interface_mac = read_interface_mac(d_interface_name);

    rdma_cm_id* id = nullptr;
    errno = 0;
    // A NULL event channel puts the id in synchronous mode: we only bind it.
    if (rdma_create_id(nullptr, &id, nullptr, RDMA_PS_UDP) != 0)
        throw_error("rdma_create_id",
                    errno ? errno : ENODEV,
                    no_device_message(d_address, d_interface_name));
    d_id.reset(id);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(interface_address.to_uint());
    errno = 0;
    if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&sin)) != 0)
        throw_error("rdma_bind_addr(" + d_address.to_string() + ")",
                    errno ? errno : ENODEV,
                    no_device_message(d_address, d_interface_name));
    if (!id->verbs)
        throw_error("rdma_bind_addr(" + d_address.to_string() + ")",
                    ENODEV,
                    no_device_message(d_address, d_interface_name));
}

ibv_device_attr device_binding::query_device() const
{
    ibv_device_attr attr{};
    const int status = ibv_query_device(context(), &attr);
    if (status != 0)
        throw_error("ibv_query_device", status);
    return attr;
}

ibv_device_attr_ex device_binding::query_device_ex() const
{
    ibv_device_attr_ex attr{};
    const int status = ibv_query_device_ex(context(), nullptr, &attr);
    if (status != 0)
        throw_error("ibv_query_device_ex", status);
    return attr;
}

ibv_port_attr device_binding::query_port() const
{
    ibv_port_attr attr{};
    const int status = ibv_query_port(context(), port_num(), &attr);
    if (status != 0)
        throw_error("ibv_query_port", status);
    return attr;
}

bool device_binding::has_flow_steering() const
{
    return query_device().device_cap_flags & IBV_DEVICE_MANAGED_FLOW_STEERING;
}

bool device_binding::has_ip_checksum_offload() const
{
    try {
        return query_device_ex().raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM;
    } catch (const std::system_error&) {
        return false; // old providers without the extended query: checksum in software
    }
}

int device_binding::num_comp_vectors() const
{
    return context()->num_comp_vectors > 0 ? context()->num_comp_vectors : 1;
}

std::string device_binding::device_name() const
{
    const char* name = ibv_get_device_name(context()->device);
    return name ? name : "?";
}

std::string device_binding::port_counter_path(const std::string& counter) const
{
    return std::string(context()->device->ibdev_path) + "/ports/" +
           std::to_string(port_num()) + "/hw_counters/" + counter;
}

} // namespace ibv
} // namespace spead
} // namespace gr
