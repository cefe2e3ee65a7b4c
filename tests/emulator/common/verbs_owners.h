/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// unique_ptr owners for verbs objects, shared by the fidelity tests and the traffic
// programs. Declare them in creation order: they are destroyed in reverse, which is the
// order rdma-core requires (flows, QP, indirection table, WQ, CQs, channel, MRs, PD,
// context).
#ifndef SPEAD_EMU_VERBS_OWNERS_H
#define SPEAD_EMU_VERBS_OWNERS_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <memory>

namespace verbs_owners {

// rdma-core defines these destroy verbs static inline; a destroyer needs linkage.
inline int destroy_flow(ibv_flow* flow) { return ibv_destroy_flow(flow); }
inline int destroy_wq(ibv_wq* wq) { return ibv_destroy_wq(wq); }
inline int destroy_table(ibv_rwq_ind_table* table)
{
    return ibv_destroy_rwq_ind_table(table);
}
inline int destroy_counters(ibv_counters* counters)
{
    return ibv_destroy_counters(counters);
}

// Calls \p destroy on the object (the verbs call that destroys its kind).
template <auto destroy>
struct destroyer {
    template <typename T>
    void operator()(T* object) const
    {
        destroy(object);
    }
};

using cm_id_ptr = std::unique_ptr<rdma_cm_id, destroyer<rdma_destroy_id>>;
using context_ptr = std::unique_ptr<ibv_context, destroyer<ibv_close_device>>;
using pd_ptr = std::unique_ptr<ibv_pd, destroyer<ibv_dealloc_pd>>;
using mr_ptr = std::unique_ptr<ibv_mr, destroyer<ibv_dereg_mr>>;
using channel_ptr =
    std::unique_ptr<ibv_comp_channel, destroyer<ibv_destroy_comp_channel>>;
using cq_ptr = std::unique_ptr<ibv_cq, destroyer<ibv_destroy_cq>>;
using qp_ptr = std::unique_ptr<ibv_qp, destroyer<ibv_destroy_qp>>;
using flow_ptr = std::unique_ptr<ibv_flow, destroyer<destroy_flow>>;
// An RX-hash QP's receive side: the WQ, then the table over it, then the QP.
using wq_ptr = std::unique_ptr<ibv_wq, destroyer<destroy_wq>>;
using rwq_ind_table_ptr = std::unique_ptr<ibv_rwq_ind_table, destroyer<destroy_table>>;
// Before the flows that count into them: a bound counters object cannot be destroyed.
using counters_ptr = std::unique_ptr<ibv_counters, destroyer<destroy_counters>>;

} // namespace verbs_owners

#endif
