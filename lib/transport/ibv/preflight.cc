/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "device_binding.h"
#include "mlx5_direct.h"
#include "preflight.h"
#include "privileges.h"
#include "transport/network_interface.h"
#include <gnuradio/spead/recv_udp_ibv.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <system_error>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <tuple>

namespace gr {
namespace spead {
namespace ibv {

bool has_capability(int capability)
{
    __user_cap_header_struct header{};
    header.version = _LINUX_CAPABILITY_VERSION_3;
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (capability < 0 || capability >= 32 * _LINUX_CAPABILITY_U32S_3 ||
        syscall(SYS_capget, &header, data) != 0)
        return false;
    return data[capability / 32].effective & (1u << (capability % 32));
}

void diagnose(preflight_report& r)
{
    r.problems.clear();
    r.notes.clear();
    if (r.interface_name.empty()) {
        // device_error holds resolve_interface's message, which lists the interfaces.
        r.problems.push_back(r.device_error.empty()
                                 ? "interface \"" + r.interface_query +
                                       "\" is not a local interface with an IPv4 "
                                       "address; give the netdev name (e.g. eth0) or "
                                       "IPv4 address of the NIC's interface"
                                 : r.device_error);
    } else if (!r.device_found && r.rdma_devices == 0) {
        // Not this interface's problem: there is nothing RDMA here at all.
        std::string why = "this machine has no RDMA device at all (ibverbs lists none)";
        if (!r.kernel_rdma)
            why += ", and the kernel has no RDMA support loaded (no "
                   "/sys/class/infiniband): load the NIC's RDMA driver (`modprobe "
                   "mlx5_ib` for ConnectX-4 and later, which also loads ib_uverbs), or "
                   "run a kernel built with InfiniBand support";
        else if (!r.kernel_uverbs)
            why += ": the kernel's RDMA core is loaded but not ib_uverbs, which gives "
                   "programs their verbs: `modprobe ib_uverbs`";
        else
            why += ": the kernel supports RDMA but no NIC driver offers it; ibverbs "
                   "needs a NIC whose driver provides verbs (ConnectX with mlx5_ib), "
                   "check `rdma link show`";
        r.problems.push_back(why + "; or use transport udp (auto falls back to it)");
        if (!r.device_error.empty())
            r.notes.push_back("finding the device said: " + r.device_error);
    } else if (!r.device_found) {
        r.problems.push_back(r.device_error);
    } else {
        if (!r.flow_steering)
            r.problems.push_back(
                "device " + r.device_name +
                " does not offer managed flow steering, which the ibverbs transport "
                "needs to steer UDP flows to its queue pair; on ConnectX-3 (mlx4) set "
                "`options mlx4_core log_num_mgm_entry_size=-1` in "
                "/etc/modprobe.d/mlx4.conf and reload mlx4_core (see docs/ibverbs.md), "
                "or use transport udp");
        if (!r.port_active)
            r.notes.push_back("port " + std::to_string(r.port_num) + " of " +
                              r.device_name +
                              " is not active (link down): nothing arrives until the "
                              "link comes up");
        r.notes.push_back(
            r.ip_csum_offload
                ? "IPv4 header checksums: computed by the NIC"
                : "IPv4 header checksums: computed in software (the device does "
                  "not advertise IBV_RAW_PACKET_CAP_IP_CSUM)");
        r.notes.push_back(
            r.striding_rq
                ? "receive queue: multi-packet (mlx5 striding RQ, " +
                      r.striding_rq_detail +
                      "): each packet takes only the 64-byte strides it needs"
                : "receive queue: fixed slots of max_size + 42 bytes (no multi-packet "
                  "receive queue: " +
                      r.striding_rq_detail + ")");
        r.notes.push_back("completion vectors: " + std::to_string(r.comp_vectors) +
                          " (comp_vector is taken modulo this; negative busy-polls)");
    }
    if (r.mtu > 0)
        r.notes.push_back("MTU " + std::to_string(r.mtu) + ": UDP payloads up to " +
                          // IPv4 and UDP headers; at most 65535 bytes in all
                          std::to_string(std::min(r.mtu - 28, 65507)) + " bytes" +
                          (r.mtu < 9000
                               ? " (SPEAD over ibverbs usually runs on 9000-byte "
                                 "jumbo frames)"
                               : ""));

    if (!r.cap_net_raw)
        r.problems.push_back(
            "CAP_NET_RAW is missing: the ibverbs transport creates raw-packet queue "
            "pairs, which need it. " +
            cap_net_raw_fix());

    const bool memlock_enough =
        r.memlock_soft == RLIM_INFINITY || r.memlock_soft >= r.buffer_bytes;
    if (r.cap_ipc_lock && !memlock_enough)
        r.notes.push_back("RLIMIT_MEMLOCK is " + format_limit(r.memlock_soft) +
                          ", below the " + format_limit(r.buffer_bytes) +
                          " to pin, but CAP_IPC_LOCK lifts the limit");
    else if (!memlock_enough)
        r.problems.push_back(
            "memlock limit too low: the NIC must pin " + format_limit(r.buffer_bytes) +
            " of memory but RLIMIT_MEMLOCK is " + format_limit(r.memlock_soft) +
            " (hard limit " + format_limit(r.memlock_hard) +
            "). Raise it: `ulimit -l unlimited` in the shell that starts the program, "
            "`memlock unlimited` for the user in /etc/security/limits.conf, or "
            "LimitMEMLOCK=infinity in a systemd unit; or reduce buffer_size");
    else
        r.notes.push_back("RLIMIT_MEMLOCK " + format_limit(r.memlock_soft) + " (" +
                          format_limit(r.buffer_bytes) + " to pin)");
}

preflight_report preflight(const std::string& interface, std::size_t buffer_bytes)
{
    preflight_report r;
    r.interface_query = interface;
    r.buffer_bytes =
        buffer_bytes == 0 ? recv::udp_ibv_config::default_buffer_size : buffer_bytes;
    r.cap_net_raw = has_cap_net_raw();
    r.cap_ipc_lock = has_capability(CAP_IPC_LOCK);
    std::tie(r.memlock_soft, r.memlock_hard) = memlock_limit();

    transport::network_interface found;
    try {
        found = transport::resolve_interface(interface, "interface");
        r.interface_name = found.name;
        r.interface_address = found.address.to_string();
    } catch (const std::invalid_argument& e) {
        r.device_error = e.what();
    }
    // rdma-core gives no list at all (ENOSYS) when the kernel has no verbs to offer.
    int devices = 0;
    errno = 0;
    if (ibv_device** list = ibv_get_device_list(&devices)) {
        ibv_free_device_list(list);
        r.rdma_devices = devices;
    } else if (errno == ENOSYS) {
        r.rdma_devices = 0;
    }
    r.kernel_rdma = access("/sys/class/infiniband", F_OK) == 0;
    r.kernel_uverbs = access("/sys/module/ib_uverbs", F_OK) == 0 ||
                      access("/dev/infiniband/uverbs0", F_OK) == 0;
    if (!r.interface_name.empty()) {
        try {
            r.mtu = transport::interface_mtu(r.interface_name);
        } catch (const std::system_error&) {
            r.mtu = 0;
        }
        try {
            const device_binding binding(found.address);
            r.device_found = true;
            r.device_name = binding.device_name();
            r.port_num = binding.port_num();
            r.comp_vectors = binding.num_comp_vectors();
            r.flow_steering = binding.has_flow_steering();
            r.ip_csum_offload = binding.has_ip_checksum_offload();
            const striding_rq_support striding = query_striding_rq(binding.context());
            r.striding_rq = striding.usable;
            const auto& caps = striding.caps;
            r.striding_rq_detail =
                striding.usable
                    ? "strides of " +
                          std::to_string(1u << caps.min_single_stride_log_num_of_bytes) +
                          " to " +
                          std::to_string(1u << caps.max_single_stride_log_num_of_bytes) +
                          " bytes, " +
                          std::to_string(1u << caps.min_single_wqe_log_num_of_strides) +
                          " to " +
                          std::to_string(1u << caps.max_single_wqe_log_num_of_strides) +
                          " per WQE"
                    : striding.reason;
            r.port_active = binding.query_port().state == IBV_PORT_ACTIVE;
        } catch (const std::system_error& e) {
            if (!r.device_found)
                r.device_error = e.what();
            else // found, but a query failed: say which
                r.device_error = std::string("querying the device: ") + e.what();
        }
    }
    diagnose(r);
    if (r.device_found && !r.device_error.empty())
        r.problems.push_back(r.device_error);
    return r;
}

std::string preflight_report::summary() const
{
    const std::string where = interface_name.empty()
                                  ? "\"" + interface_query + "\""
                                  : interface_name + " (" + interface_address + ")";
    if (usable())
        return "ibverbs can be used on " + where + ": device " + device_name + " port " +
               std::to_string(port_num) + ", " + std::to_string(comp_vectors) +
               " completion vectors, MTU " + std::to_string(mtu);
    std::string line = "ibverbs cannot be used on " + where + ": ";
    for (std::size_t i = 0; i < problems.size(); i++)
        line += (i ? " | " : "") + problems[i];
    for (char& c : line)
        if (c == '\n')
            c = ' ';
    return line;
}

} // namespace ibv
} // namespace spead
} // namespace gr
