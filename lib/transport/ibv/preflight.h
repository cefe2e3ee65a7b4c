/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Can the ibverbs transport run on this interface, in this process? One answer for the
// blocks' transport=auto, their ibverbs errors and apps/spead_ibv_check: what was found
// (interface, device, capabilities, limits) and every reason it cannot work, each
// naming its cause and its fix.

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_PREFLIGHT_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_PREFLIGHT_H

#include <gnuradio/spead/api.h>
#include <sys/resource.h>
#include <cstddef>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace ibv {

/*! What preflight() found, and what it concluded. */
struct SPEAD_API preflight_report {
    // ---- the interface ----
    std::string interface_query;   //!< what the user gave (netdev name or IPv4)
    std::string interface_name;    //!< resolved netdev, empty if not found
    std::string interface_address; //!< its IPv4, empty if none
    int mtu = 0;                   //!< netdev MTU, bytes (0: unknown)

    // ---- the RDMA device that owns it (rdma_create_id + rdma_bind_addr) ----
    bool device_found = false;
    std::string device_name; //!< rdma-core's name, e.g. mlx5_0
    int port_num = 0;
    bool port_active = false;     //!< the port's link is up
    int comp_vectors = 0;         //!< completion vectors (interrupt queues)
    bool flow_steering = false;   //!< IBV_DEVICE_MANAGED_FLOW_STEERING
    bool ip_csum_offload = false; //!< IBV_RAW_PACKET_CAP_IP_CSUM
    /*! The receiver will use a multi-packet receive queue (mlx5 striding RQ). */
    bool striding_rq = false;
    std::string striding_rq_detail; //!< its stride range, or why there is none
    std::string device_error;       //!< why no device was found (the binding's message)
    int rdma_devices = -1;   //!< devices ibverbs lists on the machine (-1: unknown)
    bool kernel_rdma = true; //!< the kernel's RDMA core is loaded (/sys/class/infiniband)
    bool kernel_uverbs = true; //!< ib_uverbs, verbs for user space, is loaded

    // ---- this process ----
    bool cap_net_raw = false;  //!< raw-packet QPs need it
    bool cap_ipc_lock = false; //!< pinning then ignores RLIMIT_MEMLOCK
    rlim_t memlock_soft = 0;   //!< RLIMIT_MEMLOCK, bytes (RLIM_INFINITY: unlimited)
    rlim_t memlock_hard = 0;
    std::size_t buffer_bytes = 0; //!< memory the transport would pin

    std::vector<std::string> problems; //!< each names the cause AND the fix
    std::vector<std::string> notes;    //!< informational

    bool usable() const { return problems.empty(); }
    /*! One line: why ibverbs can or cannot be used on the interface. */
    std::string summary() const;
};

/*!
 * Examines \p interface (a netdev name or an IPv4 address) for the ibverbs transport:
 * resolves it, binds an RDMA id to find its device (released before returning), and
 * checks CAP_NET_RAW, RLIMIT_MEMLOCK against \p buffer_bytes (0: the receive default,
 * 16 MiB) and flow steering. Never throws for what it examines: every failure becomes a
 * problem in the report.
 */
SPEAD_API preflight_report preflight(const std::string& interface,
                                     std::size_t buffer_bytes);

/*!
 * Fills report.problems and report.notes from the facts already in \p report (what
 * preflight() does after gathering them). Separate so that combinations no machine
 * here has (a device without flow steering) can be checked.
 */
SPEAD_API void diagnose(preflight_report& report);

/*! True when this process has \p capability (CAP_*) in its effective set. */
SPEAD_API bool has_capability(int capability);

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
