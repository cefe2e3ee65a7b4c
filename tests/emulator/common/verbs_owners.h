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

struct cm_id_destroyer {
    void operator()(rdma_cm_id* id) const { rdma_destroy_id(id); }
};
struct context_closer {
    void operator()(ibv_context* context) const { ibv_close_device(context); }
};
struct pd_deallocator {
    void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};
struct mr_deregisterer {
    void operator()(ibv_mr* mr) const { ibv_dereg_mr(mr); }
};
struct channel_destroyer {
    void operator()(ibv_comp_channel* channel) const
    {
        ibv_destroy_comp_channel(channel);
    }
};
struct cq_destroyer {
    void operator()(ibv_cq* cq) const { ibv_destroy_cq(cq); }
};
struct qp_destroyer {
    void operator()(ibv_qp* qp) const { ibv_destroy_qp(qp); }
};
struct flow_destroyer {
    void operator()(ibv_flow* flow) const { ibv_destroy_flow(flow); }
};
struct wq_destroyer {
    void operator()(ibv_wq* wq) const { ibv_destroy_wq(wq); }
};
struct rwq_ind_table_destroyer {
    void operator()(ibv_rwq_ind_table* table) const { ibv_destroy_rwq_ind_table(table); }
};
struct counters_destroyer {
    void operator()(ibv_counters* counters) const { ibv_destroy_counters(counters); }
};

using cm_id_ptr = std::unique_ptr<rdma_cm_id, cm_id_destroyer>;
using context_ptr = std::unique_ptr<ibv_context, context_closer>;
using pd_ptr = std::unique_ptr<ibv_pd, pd_deallocator>;
using mr_ptr = std::unique_ptr<ibv_mr, mr_deregisterer>;
using channel_ptr = std::unique_ptr<ibv_comp_channel, channel_destroyer>;
using cq_ptr = std::unique_ptr<ibv_cq, cq_destroyer>;
using qp_ptr = std::unique_ptr<ibv_qp, qp_destroyer>;
using flow_ptr = std::unique_ptr<ibv_flow, flow_destroyer>;
// An RX-hash QP's receive side: the WQ, then the table over it, then the QP.
using wq_ptr = std::unique_ptr<ibv_wq, wq_destroyer>;
using rwq_ind_table_ptr = std::unique_ptr<ibv_rwq_ind_table, rwq_ind_table_destroyer>;
// Before the flows that count into them: a bound counters object cannot be destroyed.
using counters_ptr = std::unique_ptr<ibv_counters, counters_destroyer>;

} // namespace verbs_owners

#endif
