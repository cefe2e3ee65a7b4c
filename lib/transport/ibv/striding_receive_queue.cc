/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "privileges.h"
#include "striding_receive_queue.h"
#include <endian.h>
#include <system_error>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace gr {
namespace spead {
namespace ibv {

namespace {

/*! 64-byte strides waste at most 63 bytes a frame; WQEs of up to 2^20 bytes keep the
 * WQE count (and so the reposts) low. Both are clamped to the device's caps. */
constexpr std::uint32_t preferred_stride_log = 6;
constexpr std::uint32_t preferred_wqe_log = 20;
/*! mlx5's packed byte_len of a striding-RQ completion. */
constexpr std::uint32_t byte_count_mask = 0xffff;
constexpr std::uint32_t filler_flag = 0x8000;

std::uint32_t clamp_log(std::uint32_t wanted, std::uint32_t low, std::uint32_t high)
{
    return std::clamp(wanted, low, std::max(low, high));
}

} // namespace

striding_receive_queue::striding_receive_queue(const device_binding& device,
                                               const striding_rq_support& support,
                                               const receive_queue_params& params,
                                               std::string& clamped)
{
    const std::size_t buffer_bytes = params.buffer_size;
    ibv_pd* const pd = params.pd;
    const mlx5dv_striding_rq_caps& caps = support.caps;
    const std::uint32_t stride_log = clamp_log(preferred_stride_log,
                                               caps.min_single_stride_log_num_of_bytes,
                                               caps.max_single_stride_log_num_of_bytes);
    // At most 2^20-byte WQEs, and at least two of them in the buffer, so that a small
    // buffer_size stays small (within the caps).
    std::uint32_t wqe_log = preferred_wqe_log;
    while (wqe_log > stride_log && (std::size_t(2) << wqe_log) > buffer_bytes)
        wqe_log--;
    const std::uint32_t strides_log = clamp_log(wqe_log - stride_log,
                                                caps.min_single_wqe_log_num_of_strides,
                                                caps.max_single_wqe_log_num_of_strides);
    d_stride = std::size_t(1) << stride_log;
    d_strides_per_wqe = std::size_t(1) << strides_log;
    d_wqe_bytes = d_stride * d_strides_per_wqe;
    if (params.max_frame > d_wqe_bytes)
        throw_error("striding RQ",
                    EINVAL,
                    "a WQE of the device holds fewer bytes than "
                    "max_size + 42; use a smaller max_size");

    // One CQ entry per stride at most, one WQE per WQ entry.
    const ibv_device_attr attr = device.query_device();
    clamped.clear();
    d_wqe_count = std::max<std::size_t>(buffer_bytes / d_wqe_bytes, 2);
    const auto clamp = [&](std::size_t limit, const char* name) {
        if (limit < d_wqe_count) {
            d_wqe_count = limit;
            clamped = name;
        }
    };
    clamp(std::size_t(std::max(attr.max_qp_wr, 1)), "max_qp_wr, WQEs");
    clamp(std::size_t(std::max(attr.max_cqe, 1)) / d_strides_per_wqe,
          "max_cqe, completion queue entries");
    if (d_wqe_count < 2)
        throw_error(
            "striding RQ", ENOMEM, "the device's limits leave fewer than two WQEs");
    d_buffer_bytes = d_wqe_count * d_wqe_bytes;

    ibv_context* context = device.context();
    ibv_cq_init_attr_ex cq_attr{};
    cq_attr.cqe = std::uint32_t(d_wqe_count * d_strides_per_wqe);
    cq_attr.channel = params.channel;
    cq_attr.comp_vector = std::uint32_t(params.comp_vector < 0 ? 0 : params.comp_vector);
    cq_attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
    cq_attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
    cq_attr.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED; // only the reader's thread polls
    d_cq.reset(ibv_create_cq_ex(context, &cq_attr));
    if (!d_cq)
        throw_error("ibv_create_cq_ex(" + std::to_string(cq_attr.cqe) + " entries)",
                    errno);

    ibv_wq_init_attr wq_attr{};
    wq_attr.wq_type = IBV_WQT_RQ;
    wq_attr.max_wr = std::uint32_t(d_wqe_count);
    wq_attr.max_sge = 1;
    wq_attr.pd = pd;
    wq_attr.cq = cq();
    mlx5dv_wq_init_attr mlx5_attr{};
    mlx5_attr.comp_mask = MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ;
    mlx5_attr.striding_rq_attrs.single_stride_log_num_of_bytes = stride_log;
    mlx5_attr.striding_rq_attrs.single_wqe_log_num_of_strides = strides_log;
    d_wq.reset(support.mlx5->create_wq(context, &wq_attr, &mlx5_attr));
    if (!d_wq)
        throw_error("mlx5dv_create_wq (striding RQ)", errno);
    mlx5dv_obj obj{};
    obj.rwq.in = d_wq.get();
    obj.rwq.out = &d_ring;
    if (const int status = support.mlx5->init_obj(&obj, MLX5DV_OBJ_RWQ))
        throw_error("mlx5dv_init_obj(MLX5DV_OBJ_RWQ)", status);
    if (d_ring.stride != sizeof(mlx5_mprq_wqe) || d_ring.wqe_cnt < d_wqe_count)
        throw_error("striding RQ",
                    EOPNOTSUPP,
                    "the provider lays WQEs out differently "
                    "from rdma-core 44's mlx5; report the rdma-core version");

    ibv_wq* table_entries[1] = { d_wq.get() };
    ibv_rwq_ind_table_init_attr table_attr{};
    table_attr.log_ind_tbl_size = 0;
    table_attr.ind_tbl = table_entries;
    d_table.reset(ibv_create_rwq_ind_table(context, &table_attr));
    if (!d_table)
        throw_error("ibv_create_rwq_ind_table", errno);

    // One WQ, so the hash only has to be one mlx5 accepts: Toeplitz, any key, no fields.
    static std::uint8_t toeplitz_key[40] = {};
    ibv_qp_init_attr_ex qp_attr{};
    qp_attr.qp_type = IBV_QPT_RAW_PACKET;
    qp_attr.comp_mask =
        IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH;
    qp_attr.pd = pd;
    qp_attr.rwq_ind_tbl = d_table.get();
    qp_attr.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
    qp_attr.rx_hash_conf.rx_hash_key_len = sizeof(toeplitz_key);
    qp_attr.rx_hash_conf.rx_hash_key = toeplitz_key;
    qp_attr.rx_hash_conf.rx_hash_fields_mask = 0;
    d_qp.reset(ibv_create_qp_ex(context, &qp_attr));
    if (!d_qp)
        throw_error("ibv_create_qp_ex (RX hash QP)",
                    errno,
                    errno == EPERM ? cap_net_raw_fix() : std::string());

    d_buffer = allocate_ring(d_buffer_bytes);
    d_mr = register_memory(pd, d_buffer.get(), d_buffer_bytes, IBV_ACCESS_LOCAL_WRITE);
    d_finished.reserve(d_wqe_count);
}

std::string striding_receive_queue::describe() const
{
    return "multi-packet receive queue (striding RQ) of " + std::to_string(d_wqe_count) +
           " WQEs x " + std::to_string(d_strides_per_wqe) + " strides of " +
           std::to_string(d_stride) + " bytes = " + std::to_string(d_buffer_bytes) +
           " bytes";
}

void striding_receive_queue::modify_wq(ibv_wq_state state)
{
    ibv_wq_attr attr{};
    attr.attr_mask = IBV_WQ_ATTR_STATE;
    attr.wq_state = state;
    if (const int status = ibv_modify_wq(d_wq.get(), &attr))
        throw_error("ibv_modify_wq", status);
}

void striding_receive_queue::post(std::size_t wqe)
{
    auto* entry =
        static_cast<mlx5_mprq_wqe*>(d_ring.buf) + (d_posted & (d_ring.wqe_cnt - 1));
    std::memset(&entry->nseg, 0, sizeof(entry->nseg));
    entry->dseg.byte_count = htobe32(std::uint32_t(d_wqe_bytes));
    entry->dseg.lkey = htobe32(d_mr->lkey);
    entry->dseg.addr =
        htobe64(reinterpret_cast<std::uintptr_t>(d_buffer.get()) + wqe * d_wqe_bytes);
    d_posted++;
}

void striding_receive_queue::start()
{
    // Ready first: leaving RESET, mlx5's provider zeroes the doorbell record (and
    // drops the WQ's completions), so WQEs posted before would be lost.
    modify_wq(IBV_WQS_RDY);
    d_posted = 0;
    d_tail = 0;
    d_tail_strides = 0;
    d_finished.clear();
    for (std::size_t i = 0; i < d_wqe_count; i++)
        post(i);
    // The release store orders the WQE writes before the NIC can see the count.
    reinterpret_cast<std::atomic<std::uint32_t>*>(d_ring.dbrec)
        ->store(htobe32(d_posted & 0xffff), std::memory_order_release);
}

void striding_receive_queue::reset()
{
    modify_wq(IBV_WQS_RESET);
    start();
}

int striding_receive_queue::poll(ibv_wc* out, int max, int& frames)
{
    ibv_cq_ex* cq = d_cq.get();
    ibv_poll_cq_attr attr{};
    frames = 0;
    int status = ibv_start_poll(cq, &attr);
    if (status == ENOENT)
        return 0;
    if (status != 0)
        throw std::system_error(status, std::generic_category(), "ibv_start_poll");
    int n = 0;
    while (status == 0) {
        n++;
        const ibv_wc_status wc_status = cq->status;
        const std::uint32_t packed = ibv_wc_read_byte_len(cq);
        std::uint32_t strides = packed >> 16;
        const bool filler = (strides & filler_flag) != 0;
        strides &= ~filler_flag;
        if (!filler || wc_status != IBV_WC_SUCCESS) {
            // A filler is the rest of a WQE, skipped by the NIC: no frame.
            ibv_wc& c = out[frames++];
            c.wr_id = reinterpret_cast<std::uintptr_t>(
                d_buffer.get() + d_tail * d_wqe_bytes + d_tail_strides * d_stride);
            c.status = wc_status;
            c.byte_len = packed & byte_count_mask;
            c.vendor_err = wc_status == IBV_WC_SUCCESS ? 0 : ibv_wc_read_vendor_err(cq);
        }
        if (wc_status == IBV_WC_SUCCESS) {
            d_tail_strides += strides;
            if (d_tail_strides >= d_strides_per_wqe) {
                d_finished.push_back(d_tail);
                d_tail = (d_tail + 1) % d_wqe_count;
                d_tail_strides = 0;
            }
        }
        if (n == max)
            break;
        status = ibv_next_poll(cq);
    }
    ibv_end_poll(cq);
    if (status != 0 && status != ENOENT)
        throw std::system_error(status, std::generic_category(), "ibv_next_poll");
    return n;
}

void striding_receive_queue::repost()
{
    if (d_finished.empty())
        return;
    for (const std::size_t wqe : d_finished)
        post(wqe);
    d_finished.clear();
    reinterpret_cast<std::atomic<std::uint32_t>*>(d_ring.dbrec)
        ->store(htobe32(d_posted & 0xffff), std::memory_order_release);
}

} // namespace ibv
} // namespace spead
} // namespace gr
