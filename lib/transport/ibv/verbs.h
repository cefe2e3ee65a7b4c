/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// RAII ownership of every verbs object the ibverbs transport uses, and the setup calls
// that turn rdma-core's errno values into errors naming the cause and the fix (the
// device an interface belongs to: device_binding.h; what the process needs:
// privileges.h).
// Destruction order is encoded by declaring members in creation order (C++ destroys
// them in reverse): device binding, comp channel, CQs, PD, QP, MRs, flows.

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_VERBS_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_VERBS_H

#include "transport/raw_packet.h"
#include <gnuradio/spead/api.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gr {
namespace spead {
namespace ibv {

/*! Throws std::system_error: "<what>: <strerror>. <fix>" */
[[noreturn]] void
throw_error(const std::string& what, int err, const std::string& fix = "");

struct SPEAD_API cm_id_deleter {
    void operator()(rdma_cm_id* id) const { rdma_destroy_id(id); }
};
struct SPEAD_API comp_channel_deleter {
    void operator()(ibv_comp_channel* channel) const
    {
        ibv_destroy_comp_channel(channel);
    }
};
struct SPEAD_API cq_deleter {
    void operator()(ibv_cq* cq) const { ibv_destroy_cq(cq); }
};
struct SPEAD_API pd_deleter {
    void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};
struct SPEAD_API qp_deleter {
    void operator()(ibv_qp* qp) const { ibv_destroy_qp(qp); }
};
struct SPEAD_API mr_deleter {
    void operator()(ibv_mr* mr) const { ibv_dereg_mr(mr); }
};
struct SPEAD_API flow_deleter {
    void operator()(ibv_flow* flow) const { ibv_destroy_flow(flow); }
};
struct SPEAD_API cq_ex_deleter {
    void operator()(ibv_cq_ex* cq) const { ibv_destroy_cq(ibv_cq_ex_to_cq(cq)); }
};
struct SPEAD_API wq_deleter {
    void operator()(ibv_wq* wq) const { ibv_destroy_wq(wq); }
};
struct SPEAD_API rwq_ind_table_deleter {
    void operator()(ibv_rwq_ind_table* table) const { ibv_destroy_rwq_ind_table(table); }
};
struct SPEAD_API counters_deleter {
    void operator()(ibv_counters* counters) const { ibv_destroy_counters(counters); }
};

using cm_id_ptr = std::unique_ptr<rdma_cm_id, cm_id_deleter>;
using comp_channel_ptr = std::unique_ptr<ibv_comp_channel, comp_channel_deleter>;
using cq_ptr = std::unique_ptr<ibv_cq, cq_deleter>;
using pd_ptr = std::unique_ptr<ibv_pd, pd_deleter>;
using qp_ptr = std::unique_ptr<ibv_qp, qp_deleter>;
using mr_ptr = std::unique_ptr<ibv_mr, mr_deleter>;
using flow_ptr = std::unique_ptr<ibv_flow, flow_deleter>;
/*! Declare before the flows that count into it: a flow must go first. */
using counters_ptr = std::unique_ptr<ibv_counters, counters_deleter>;
using cq_ex_ptr = std::unique_ptr<ibv_cq_ex, cq_ex_deleter>;
using wq_ptr = std::unique_ptr<ibv_wq, wq_deleter>;
using rwq_ind_table_ptr = std::unique_ptr<ibv_rwq_ind_table, rwq_ind_table_deleter>;

/*! Memory for rings: page-aligned, zeroed, freed with munmap. */
struct SPEAD_API mapping_deleter {
    std::size_t size;
    void operator()(std::uint8_t* p) const;
};
using mapping_ptr = std::unique_ptr<std::uint8_t, mapping_deleter>;
SPEAD_API mapping_ptr allocate_ring(std::size_t bytes);

SPEAD_API comp_channel_ptr create_comp_channel(ibv_context* context);
SPEAD_API cq_ptr create_cq(ibv_context* context,
                           int entries,
                           ibv_comp_channel* channel,
                           int comp_vector);
SPEAD_API pd_ptr alloc_pd(ibv_context* context);
/*! A RAW_PACKET QP. \throws std::system_error explaining CAP_NET_RAW on EPERM */
SPEAD_API qp_ptr create_raw_packet_qp(ibv_pd* pd,
                                      ibv_cq* send_cq,
                                      ibv_cq* recv_cq,
                                      const ibv_qp_cap& cap);
/*! RESET→INIT needs the port; INIT→RTR and RTR→RTS need only the state. */
SPEAD_API void modify_qp(ibv_qp* qp, ibv_qp_state state, int port_num = 0);
/*! \throws std::system_error explaining RLIMIT_MEMLOCK when the kernel refuses */
SPEAD_API mr_ptr register_memory(ibv_pd* pd,
                                 const void* address,
                                 std::size_t size,
                                 int access);
/*!
 * Steers UDP frames for \p endpoint to \p qp: exact ETH(dst MAC) + IPv4(dst) +
 * UDP(dst port) match; for 0.0.0.0 only the port (and the interface's MAC for unicast).
 * \throws std::system_error explaining flow steering when the device refuses
 */
SPEAD_API flow_ptr create_udp_flow(ibv_qp* qp,
                                   const boost::asio::ip::udp::endpoint& endpoint,
                                   const mac_address& interface_mac,
                                   int port_num);
/*! As above, and the flow counts the frames it matches into \p counters (made by
 * create_flow_packet_counter; one flow per counters object). */
SPEAD_API flow_ptr create_udp_flow(ibv_qp* qp,
                                   const boost::asio::ip::udp::endpoint& endpoint,
                                   const mac_address& interface_mac,
                                   int port_num,
                                   ibv_counters* counters);

/*!
 * A counters object that counts packets (IBV_COUNTER_PACKETS at index 0), attached
 * statically: it counts from the moment a flow is created with it, every frame the
 * flow matches, whether or not a receive was posted for it.
 * \return nullptr with \p error set when the device cannot count flows (EOPNOTSUPP
 * from providers without counters, e.g. mlx4, or mlx5 on kernels before 4.18)
 */
SPEAD_API counters_ptr create_flow_packet_counter(ibv_context* context, int& error);
/*! Reads a counter from create_flow_packet_counter (from the device, not a cache).
 * \return 0, or an errno value */
SPEAD_API int read_flow_packet_counter(ibv_counters* counters, std::uint64_t& packets);
} // namespace ibv
} // namespace spead
} // namespace gr

#endif
