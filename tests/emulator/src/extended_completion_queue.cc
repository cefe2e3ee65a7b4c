/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// ibv_create_cq_ex and the poll functions of an extended CQ (ibv_start_poll,
// ibv_next_poll, ibv_end_poll, ibv_wc_read_*), as mlx5 gives them: start/next take one
// completion and put its wr_id and status in the ibv_cq_ex; the read functions answer
// about that completion, and only those for fields asked for at creation exist.
#include "completion_queue.h"
#include "device.h"
#include "device_context.h"
#include "log.h"

#include <cerrno>

namespace spead_emu {
namespace {

const ibv_wc& current_of(ibv_cq_ex* cq)
{
    return completion_queue::from(ibv_cq_ex_to_cq(cq))->current();
}

int start_poll(ibv_cq_ex* cq, ibv_poll_cq_attr* attr)
{
    if (attr == nullptr || attr->comp_mask != 0)
        return EINVAL;
    return completion_queue::from(ibv_cq_ex_to_cq(cq))->poll_one();
}

int next_poll(ibv_cq_ex* cq)
{
    return completion_queue::from(ibv_cq_ex_to_cq(cq))->poll_one();
}

void end_poll(ibv_cq_ex*) {}

ibv_wc_opcode read_opcode(ibv_cq_ex* cq) { return current_of(cq).opcode; }
uint32_t read_vendor_err(ibv_cq_ex* cq) { return current_of(cq).vendor_err; }
uint32_t read_byte_len(ibv_cq_ex* cq) { return current_of(cq).byte_len; }
__be32 read_imm_data(ibv_cq_ex* cq) { return current_of(cq).imm_data; }
uint32_t read_qp_num(ibv_cq_ex* cq) { return current_of(cq).qp_num; }
uint32_t read_src_qp(ibv_cq_ex* cq) { return current_of(cq).src_qp; }
unsigned int read_wc_flags(ibv_cq_ex* cq) { return current_of(cq).wc_flags; }
uint32_t read_slid(ibv_cq_ex* cq) { return current_of(cq).slid; }
uint8_t read_sl(ibv_cq_ex* cq) { return current_of(cq).sl; }
uint8_t read_dlid_path_bits(ibv_cq_ex* cq) { return current_of(cq).dlid_path_bits; }
uint16_t read_cvlan(ibv_cq_ex*) { return 0; }    // VLANs are not modelled
uint32_t read_flow_tag(ibv_cq_ex*) { return 0; } // nor flow tags (MARK actions)

} // namespace

int completion_queue::enable_extended_polling(uint64_t wc_flags)
{
    constexpr uint64_t timestamps = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
                                    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
    constexpr uint64_t modelled =
        IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_CVLAN | IBV_WC_EX_WITH_FLOW_TAG;
    if (wc_flags & timestamps) {
        warn("ibv_create_cq_ex: completion timestamps are not emulated; EOPNOTSUPP, as "
             "from a NIC without a hardware clock");
        return EOPNOTSUPP;
    }
    if (wc_flags & ~modelled)
        return EOPNOTSUPP; // tag matching, or flags rdma-core 44 does not know
    ibv_cq_ex& cq = m_shell.verbs;
    cq.start_poll = start_poll;
    cq.next_poll = next_poll;
    cq.end_poll = end_poll;
    // mlx5 always provides these three; the others only when asked for.
    cq.read_opcode = read_opcode;
    cq.read_vendor_err = read_vendor_err;
    cq.read_wc_flags = read_wc_flags;
    const auto provide_if_asked = [wc_flags](uint64_t flag, auto& reader, auto function) {
        if (wc_flags & flag)
            reader = function;
    };
    provide_if_asked(IBV_WC_EX_WITH_BYTE_LEN, cq.read_byte_len, read_byte_len);
    provide_if_asked(IBV_WC_EX_WITH_IMM, cq.read_imm_data, read_imm_data);
    provide_if_asked(IBV_WC_EX_WITH_QP_NUM, cq.read_qp_num, read_qp_num);
    provide_if_asked(IBV_WC_EX_WITH_SRC_QP, cq.read_src_qp, read_src_qp);
    provide_if_asked(IBV_WC_EX_WITH_SLID, cq.read_slid, read_slid);
    provide_if_asked(IBV_WC_EX_WITH_SL, cq.read_sl, read_sl);
    provide_if_asked(
        IBV_WC_EX_WITH_DLID_PATH_BITS, cq.read_dlid_path_bits, read_dlid_path_bits);
    provide_if_asked(IBV_WC_EX_WITH_CVLAN, cq.read_cvlan, read_cvlan);
    provide_if_asked(IBV_WC_EX_WITH_FLOW_TAG, cq.read_flow_tag, read_flow_tag);
    return 0;
}

namespace operations {

ibv_cq_ex* create_cq_ex(ibv_context* context, ibv_cq_init_attr_ex* attr)
{
    if (attr == nullptr || (attr->comp_mask & ~IBV_CQ_INIT_ATTR_MASK_FLAGS) != 0) {
        errno = EINVAL; // parent domains (IBV_CQ_INIT_ATTR_MASK_PD) are not modelled
        return nullptr;
    }
    const uint32_t flags =
        (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) ? attr->flags : 0;
    if (flags & ~IBV_CREATE_CQ_ATTR_SINGLE_THREADED) {
        errno = EOPNOTSUPP; // IGNORE_OVERRUN: the emulated CQ always checks
        return nullptr;
    }
    if (attr->cqe > static_cast<uint32_t>(device_limits::max_cqe) ||
        attr->comp_vector > static_cast<uint32_t>(device_limits::max_comp_vectors)) {
        errno = EINVAL;
        return nullptr;
    }
    completion_queue* cq = completion_queue::create(context,
                                                    static_cast<int>(attr->cqe),
                                                    attr->cq_context,
                                                    attr->channel,
                                                    static_cast<int>(attr->comp_vector));
    if (cq == nullptr)
        return nullptr;
    if (const int error = cq->enable_extended_polling(attr->wc_flags)) {
        ibv_destroy_cq(cq->verbs());
        errno = error;
        return nullptr;
    }
    return cq->verbs_ex();
}

} // namespace operations
} // namespace spead_emu
