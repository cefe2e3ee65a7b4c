/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// A receive work queue (ibv_wq) of the cx5 model and the indirection table that RX-hash
// QPs steer into. The WQ is laid out as mlx5 lays it out, because applications of
// striding RQs (spead2) write its WQEs and doorbell record themselves after
// mlx5dv_init_obj(MLX5DV_OBJ_RWQ): a ring of WQEs (for a striding RQ a 16-byte
// next-segment then one data segment, 32 bytes) and a big-endian doorbell record
// holding the low 16 bits of the count of WQEs posted. The NIC reads both when a frame
// arrives, as the hardware does.
//
// Placement (the striding semantics of rdma-core's mlx5dv_create_wq(3) and the mlx5
// provider): a WQE's buffer is cut into 2^n strides of 2^m bytes; a packet takes
// ceil(len / stride) consecutive strides of the current WQE, never two WQEs; when the
// rest of the current WQE is too small, a filler completion consumes it and the packet
// goes to the next WQE. Each completion's byte_len is mlx5's packed field: the byte
// count in the low 16 bits, the strides consumed in bits 16-30, the filler flag in bit
// 31. The WQE is done when its strides are used up; the application tracks offsets
// itself (the stride index is not reported through the verbs API).
#ifndef SPEAD_EMU_WORK_QUEUE_H
#define SPEAD_EMU_WORK_QUEUE_H

#include "counters.h"
#include "object_shell.h"

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace spead_emu {

class completion_queue;
class device_context;
class protection_domain;
class queue_pair;

// mlx5dv_wq_init_attr's striding_rq_attrs, validated.
struct striding_layout {
    uint32_t stride_bytes = 0; // 0: not a striding RQ (one frame per WQE)
    uint32_t strides_per_wqe = 0;
    bool two_byte_shift = false; // frames start 2 bytes into their first stride
};

class work_queue
{
public:
    // ibv_create_wq / mlx5dv_create_wq: nullptr with errno set.
    static ibv_wq*
    create(ibv_context* context, ibv_wq_init_attr& attr, const striding_layout& layout);
    static work_queue* from(ibv_wq* wq);
    ~work_queue();

    ibv_wq* verbs() { return &m_shell.verbs; }
    device_context& context();
    completion_queue& cq() { return m_cq; }

    int modify(const ibv_wq_attr& attr);
    int destroy();
    // ibv_post_wq_recv, as mlx5's provider does it: WQEs written into the ring, the
    // doorbell record updated, wr_ids kept for completions in posting order.
    int post_receive(ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
    // mlx5dv_init_obj(MLX5DV_OBJ_RWQ).
    void describe(mlx5dv_rwq& out) const;
    // The wr_id the provider reports for the next completion polled: mlx5 takes the
    // wr_id of the WQE at its tail and advances the tail on every completion, so on
    // a striding RQ (several completions per WQE) wr_ids mean nothing.
    uint64_t wr_id_of_next_completion();

    // The NIC's side: a frame steered here by a RX-hash QP, whose counters and
    // completions it goes to.
    struct steered_frame {
        const uint8_t* bytes;
        size_t length;
        unsigned wc_flags;
        queue_pair* steering_qp;
        frame_counters& qp_counters;
    };
    void deliver_frame(const steered_frame& in);

    // Indirection tables using this WQ (ibv_destroy_wq refuses with EBUSY while any
    // remain). Guarded by the context's control mutex.
    int attached_tables = 0;

private:
    work_queue(protection_domain& pd,
               completion_queue& cq,
               const ibv_wq_init_attr& attr,
               const striding_layout& layout,
               uint32_t wqe_count,
               uint32_t wqe_bytes);
    // The next posted WQE's first data segment, or nullptr when none is posted.
    const mlx5_wqe_data_seg* take_wqe_locked();
    void deliver_striding_locked(const steered_frame& in);
    void deliver_whole_locked(const steered_frame& in);
    void fail_locked(ibv_wc_status status, queue_pair* steering_qp, const char* reason);
    void complete_locked(uint32_t byte_len,
                         ibv_wc_status status,
                         unsigned wc_flags,
                         queue_pair* steering_qp);

    synchronised_shell<ibv_wq, work_queue> m_shell{ this };
    protection_domain& m_pd;
    completion_queue& m_cq;
    const striding_layout m_layout;
    const uint32_t m_wqe_count; // a power of two
    const uint32_t m_wqe_bytes; // the ring's stride
    const uint32_t m_max_scatter;
    std::unique_ptr<uint8_t[], void (*)(void*)> m_ring;
    std::unique_ptr<uint32_t[], void (*)(void*)> m_doorbell_record;

    std::mutex m_mutex; // state and the NIC's view; taken before the CQ's
    ibv_wq_state m_state = IBV_WQS_RESET;
    // The provider's view (ibv_post_wq_recv, and the poll that reads wr_ids under the
    // CQ's lock): head and tail as mlx5 keeps them.
    std::mutex m_provider_mutex;
    std::vector<uint64_t> m_wr_ids;
    uint32_t m_provider_head = 0;
    uint32_t m_provider_tail = 0;
    // The NIC's view: WQEs started (16-bit counter, as the doorbell record), the
    // current one's segment and the strides of it used so far.
    uint16_t m_nic_consumed = 0;
    bool m_have_current = false;
    mlx5_wqe_data_seg m_current{};
    bool m_warned_oversize = false;
    uint32_t m_current_strides_used = 0;
};

class indirection_table
{
public:
    static ibv_rwq_ind_table* create(ibv_context* context,
                                     const ibv_rwq_ind_table_init_attr& attr);
    static indirection_table* from(ibv_rwq_ind_table* table);
    ibv_rwq_ind_table* verbs() { return &m_shell.verbs; }
    work_queue& only_queue() { return m_queue; }
    int destroy();

    // RX-hash QPs using this table. Guarded by the context's control mutex.
    int attached_queue_pairs = 0;

private:
    indirection_table(device_context& context, work_queue& queue);
    object_shell<ibv_rwq_ind_table, indirection_table> m_shell{ this };
    device_context& m_context;
    work_queue& m_queue;
};

} // namespace spead_emu

#endif
