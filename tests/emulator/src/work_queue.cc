/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "work_queue.h"

#include "completion_queue.h"
#include "device.h"
#include "device_context.h"
#include "enum_names.h"
#include "log.h"
#include "memory_region.h"
#include "protection_domain.h"
#include "queue_pair.h"

#include <endian.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace spead_emu {
namespace {

constexpr uint32_t filler_flag = 0x8000; // in the strides field of byte_len
constexpr size_t cache_line = 64;

uint32_t round_up_to_power_of_two(uint32_t value)
{
    uint32_t power = 1;
    while (power < value)
        power <<= 1;
    return power;
}

std::atomic<uint32_t>& doorbell_word(uint32_t* record)
{
    static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
    return *reinterpret_cast<std::atomic<uint32_t>*>(record);
}

template <typename T>
std::unique_ptr<T[], void (*)(void*)> aligned_zeroed(size_t bytes)
{
    void* memory =
        aligned_alloc(cache_line, (bytes + cache_line - 1) / cache_line * cache_line);
    if (memory != nullptr)
        memset(memory, 0, bytes);
    return { static_cast<T*>(memory), free };
}

const char* wq_state_name(ibv_wq_state state)
{
    static const char* const names[] = { "RESET", "RDY", "ERR" };
    return enum_name(names, state, "UNKNOWN");
}

int post_wq_recv(ibv_wq* wq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr)
{
    return work_queue::from(wq)->post_receive(wr, bad_wr);
}

} // namespace

work_queue::work_queue(protection_domain& pd,
                       completion_queue& cq,
                       const ibv_wq_init_attr& attr,
                       const striding_layout& layout,
                       uint32_t wqe_count,
                       uint32_t wqe_bytes)
    : m_pd(pd),
      m_cq(cq),
      m_layout(layout),
      m_wqe_count(wqe_count),
      m_wqe_bytes(wqe_bytes),
      m_max_scatter(layout.stride_bytes ? 1 : wqe_bytes / sizeof(mlx5_wqe_data_seg)),
      m_ring(aligned_zeroed<uint8_t>(size_t{ wqe_count } * wqe_bytes)),
      m_doorbell_record(aligned_zeroed<uint32_t>(sizeof(uint32_t))),
      m_wr_ids(wqe_count)
{
    ibv_wq& wq = m_shell.verbs;
    pd.adopt(wq.context, wq.pd, wq.handle);
    wq.wq_context = attr.wq_context;
    wq.cq = cq.verbs();
    wq.wq_num = pd.context().device().allocate_qp_number();
    wq.state = IBV_WQS_RESET;
    wq.wq_type = IBV_WQT_RQ;
    wq.post_recv = post_wq_recv;
}

work_queue::~work_queue() = default;

work_queue* work_queue::from(ibv_wq* wq)
{
    return object_shell<ibv_wq, work_queue>::owner_of(wq);
}

device_context& work_queue::context() { return m_pd.context(); }

ibv_wq* work_queue::create(ibv_context* context,
                           ibv_wq_init_attr& attr,
                           const striding_layout& layout)
{
    device_context* emulated = device_context::from(context);
    protection_domain* pd = protection_domain::from(attr.pd);
    completion_queue* cq = completion_queue::from(attr.cq);
    if (emulated == nullptr || pd == nullptr || cq == nullptr ||
        &pd->context() != emulated || &cq->context() != emulated ||
        attr.wq_type != IBV_WQT_RQ || attr.max_wr == 0 ||
        attr.max_wr > static_cast<uint32_t>(device_limits::max_qp_wr) ||
        attr.max_sge > static_cast<uint32_t>(device_limits::max_sge) ||
        (attr.comp_mask & ~IBV_WQ_INIT_ATTR_FLAGS) != 0) {
        errno = EINVAL;
        return nullptr;
    }
    if ((attr.comp_mask & IBV_WQ_INIT_ATTR_FLAGS) && attr.create_flags != 0) {
        warn("ibv_create_wq: create_flags 0x%x (VLAN stripping, FCS, delay drop, "
             "padding) are not emulated; EOPNOTSUPP",
             attr.create_flags);
        errno = EOPNOTSUPP;
        return nullptr;
    }
    if (layout.stride_bytes != 0 && attr.max_sge > 1)
        fail_unemulated("mlx5dv_create_wq: a striding RQ with max_sge %u (the hardware "
                        "uses one buffer per WQE; only max_sge 0 or 1 is emulated)",
                        attr.max_sge);
    // mlx5's sizing: data segments (plus the next-segment of a striding WQE) rounded
    // up to a power of two; the ring holds a power of two of them, at least 64 bytes.
    const uint32_t scatter = attr.max_sge > 0 ? attr.max_sge : 1;
    const uint32_t wqe_bytes = round_up_to_power_of_two(
        static_cast<uint32_t>(scatter * sizeof(mlx5_wqe_data_seg) +
                              (layout.stride_bytes ? sizeof(mlx5_wqe_srq_next_seg) : 0)));
    uint32_t wqe_count = round_up_to_power_of_two(attr.max_wr);
    if (wqe_count * wqe_bytes < 64)
        wqe_count = 64 / wqe_bytes;
    std::lock_guard<std::mutex> lock(emulated->control_mutex());
    auto* wq = new work_queue(*pd, *cq, attr, layout, wqe_count, wqe_bytes);
    if (!wq->m_ring || !wq->m_doorbell_record) {
        delete wq;
        errno = ENOMEM;
        return nullptr;
    }
    cq->attached_queue_pairs++;
    pd->live_queue_pairs++;
    attr.max_wr = wqe_count;
    attr.max_sge = wq->m_max_scatter;
    if (layout.stride_bytes)
        trace("WQ 0x%x: striding RQ, %u WQEs of %u strides of %u bytes%s",
              wq->verbs()->wq_num,
              wqe_count,
              layout.strides_per_wqe,
              layout.stride_bytes,
              layout.two_byte_shift ? ", two-byte shift" : "");
    else
        trace(
            "WQ 0x%x: %u WQEs of %u SGEs", wq->verbs()->wq_num, wqe_count, attr.max_sge);
    return wq->verbs();
}

int work_queue::modify(const ibv_wq_attr& attr)
{
    if ((attr.attr_mask & ~(IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE)) != 0)
        return EOPNOTSUPP; // flags (VLAN stripping ...) are not emulated
    std::lock_guard<std::mutex> lock(m_mutex);
    if ((attr.attr_mask & IBV_WQ_ATTR_CURR_STATE) && attr.curr_wq_state != m_state)
        return EINVAL;
    if (!(attr.attr_mask & IBV_WQ_ATTR_STATE))
        return 0;
    const ibv_wq_state target = attr.wq_state;
    const bool allowed =
        target == IBV_WQS_RESET || target == IBV_WQS_ERR ||
        (target == IBV_WQS_RDY && (m_state == IBV_WQS_RESET || m_state == IBV_WQS_RDY));
    if (!allowed)
        return EINVAL;
    trace("WQ 0x%x: %s -> %s",
          m_shell.verbs.wq_num,
          wq_state_name(m_state),
          wq_state_name(target));
    if (target == IBV_WQS_RESET) {
        // The hardware forgets the WQEs it had.
        m_nic_consumed = 0;
        m_have_current = false;
        m_current_strides_used = 0;
    } else if (target == IBV_WQS_RDY && m_state == IBV_WQS_RESET) {
        // As mlx5_modify_wq: leaving RESET, the provider drops the WQ's completions
        // from its CQ, starts its indices over and zeroes the doorbell record, so
        // WQEs posted while in RESET are lost: post after the WQ is ready. The CQ's
        // lock is taken first and alone: polling holds it while it asks this WQ for
        // a wr_id (under the provider lock), so the two are never nested this way.
        // Nothing completes on a WQ in RESET meanwhile.
        m_cq.remove_entries_of(this);
        std::lock_guard<std::mutex> provider(m_provider_mutex);
        m_provider_head = m_provider_tail = 0;
        doorbell_word(m_doorbell_record.get()).store(0, std::memory_order_release);
    }
    m_state = target;
    m_shell.verbs.state = target;
    return 0;
}

int work_queue::destroy()
{
    device_context& context = this->context();
    std::lock_guard<std::mutex> control(context.control_mutex());
    if (attached_tables != 0)
        return EBUSY; // the kernel refuses too
    m_cq.attached_queue_pairs--;
    m_pd.live_queue_pairs--;
    trace("WQ 0x%x destroyed", m_shell.verbs.wq_num);
    delete this;
    return 0;
}

int work_queue::post_receive(ibv_recv_wr* wr, ibv_recv_wr** bad_wr)
{
    std::lock_guard<std::mutex> lock(m_provider_mutex);
    uint32_t posted = 0;
    int error = 0;
    for (; wr != nullptr; wr = wr->next, posted++) {
        // mlx5_wq_overflow(): head and tail are unsigned and the tail moves on every
        // completion polled, so on a striding RQ this refuses with ENOMEM once more
        // completions than WQEs were polled (why spead2 writes WQEs itself).
        if (m_provider_head - m_provider_tail + posted >= m_wqe_count) {
            error = ENOMEM;
            break;
        }
        if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > m_max_scatter) {
            error = EINVAL;
            break;
        }
        const uint32_t index = (m_provider_head + posted) & (m_wqe_count - 1);
        uint8_t* wqe = m_ring.get() + size_t{ index } * m_wqe_bytes;
        if (m_layout.stride_bytes) {
            memset(wqe, 0, sizeof(mlx5_wqe_srq_next_seg));
            wqe += sizeof(mlx5_wqe_srq_next_seg);
        }
        auto* segments = reinterpret_cast<mlx5_wqe_data_seg*>(wqe);
        uint32_t used = 0;
        for (int i = 0; i < wr->num_sge; i++) {
            if (wr->sg_list[i].length == 0)
                continue;
            segments[used].byte_count = htobe32(wr->sg_list[i].length);
            segments[used].lkey = htobe32(wr->sg_list[i].lkey);
            segments[used].addr = htobe64(wr->sg_list[i].addr);
            used++;
        }
        if (used < m_max_scatter) {
            segments[used].byte_count = 0;
            segments[used].lkey = htobe32(MLX5_INVALID_LKEY);
            segments[used].addr = 0;
        }
        m_wr_ids[index] = wr->wr_id;
    }
    if (posted != 0) {
        m_provider_head += posted;
        doorbell_word(m_doorbell_record.get())
            .store(htobe32(m_provider_head & 0xffff), std::memory_order_release);
    }
    if (error != 0 && bad_wr != nullptr)
        *bad_wr = wr;
    return error;
}

void work_queue::describe(mlx5dv_rwq& out) const
{
    out.buf = m_ring.get();
    out.dbrec = reinterpret_cast<__be32*>(m_doorbell_record.get());
    out.wqe_cnt = m_wqe_count;
    out.stride = m_wqe_bytes;
    out.comp_mask = 0;
}

uint64_t work_queue::wr_id_of_next_completion()
{
    std::lock_guard<std::mutex> lock(m_provider_mutex);
    return m_wr_ids[m_provider_tail++ & (m_wqe_count - 1)];
}

const mlx5_wqe_data_seg* work_queue::take_wqe_locked()
{
    // The application's release store of the doorbell record orders its WQE writes.
    const uint32_t record =
        be32toh(doorbell_word(m_doorbell_record.get()).load(std::memory_order_acquire));
    if (static_cast<uint16_t>(record) == m_nic_consumed)
        return nullptr;
    const uint8_t* wqe =
        m_ring.get() + size_t{ m_nic_consumed & (m_wqe_count - 1) } * m_wqe_bytes;
    m_nic_consumed++;
    if (m_layout.stride_bytes)
        wqe += sizeof(mlx5_wqe_srq_next_seg);
    return reinterpret_cast<const mlx5_wqe_data_seg*>(wqe);
}

void work_queue::deliver_frame(const steered_frame& in)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_state != IBV_WQS_RDY) {
        count(&frame_counters::rx_frames_dropped_qp_not_ready,
              in.qp_counters,
              context().device().port_counters());
        trace("WQ 0x%x in %s: frame of %zu bytes dropped",
              m_shell.verbs.wq_num,
              wq_state_name(m_state),
              in.length);
        return;
    }
    if (m_layout.stride_bytes)
        deliver_striding_locked(in);
    else
        deliver_whole_locked(in);
}

void work_queue::deliver_striding_locked(const steered_frame& in)
{
    frame_counters& port = context().device().port_counters();
    const uint32_t shift = m_layout.two_byte_shift ? 2 : 0;
    const uint32_t bytes = static_cast<uint32_t>(in.length) + shift;
    const uint32_t strides = (bytes + m_layout.stride_bytes - 1) / m_layout.stride_bytes;
    if (strides > m_layout.strides_per_wqe) {
        count(&frame_counters::rx_frames_dropped_oversize, in.qp_counters, port);
        if (!m_warned_oversize)
            warn("WQ 0x%x: a frame of %zu bytes is larger than a whole WQE (%u strides "
                 "of %u bytes); dropped",
                 m_shell.verbs.wq_num,
                 in.length,
                 m_layout.strides_per_wqe,
                 m_layout.stride_bytes);
        m_warned_oversize = true;
        return;
    }
    if (m_have_current && m_current_strides_used + strides > m_layout.strides_per_wqe) {
        // The rest of this WQE is too small: a filler completion consumes it.
        const uint32_t rest = m_layout.strides_per_wqe - m_current_strides_used;
        complete_locked((filler_flag | rest) << 16, IBV_WC_SUCCESS, 0, in.steering_qp);
        m_have_current = false;
    }
    if (!m_have_current) {
        const mlx5_wqe_data_seg* segment = take_wqe_locked();
        if (segment == nullptr) {
            count(&frame_counters::rx_frames_dropped_no_receive, in.qp_counters, port);
            trace("WQ 0x%x: no WQE posted, frame of %zu bytes dropped",
                  m_shell.verbs.wq_num,
                  in.length);
            return;
        }
        m_current = *segment;
        m_have_current = true;
        m_current_strides_used = 0;
    }
    ibv_sge target{};
    target.addr = be64toh(m_current.addr) +
                  uint64_t{ m_current_strides_used } * m_layout.stride_bytes + shift;
    target.length = strides * m_layout.stride_bytes - shift;
    target.lkey = be32toh(m_current.lkey);
    // The WQE's buffer must hold all its strides, as the hardware assumes.
    const uint64_t wqe_bytes =
        uint64_t{ m_layout.strides_per_wqe } * m_layout.stride_bytes;
    const ibv_wc_status status =
        be32toh(m_current.byte_count) < wqe_bytes
            ? IBV_WC_LOC_LEN_ERR
            : context().memory_regions().scatter(m_pd, &target, 1, in.bytes, in.length);
    if (status != IBV_WC_SUCCESS) {
        fail_locked(
            status, in.steering_qp, "a striding WQE named memory it may not write");
        return;
    }
    count(&frame_counters::rx_frames_delivered, in.qp_counters, port);
    complete_locked(strides << 16 | bytes, IBV_WC_SUCCESS, in.wc_flags, in.steering_qp);
    m_current_strides_used += strides;
    if (m_current_strides_used == m_layout.strides_per_wqe)
        m_have_current = false; // the WQE is used up; its last completion says so
}

void work_queue::deliver_whole_locked(const steered_frame& in)
{
    frame_counters& port = context().device().port_counters();
    const mlx5_wqe_data_seg* segments = take_wqe_locked();
    if (segments == nullptr) {
        count(&frame_counters::rx_frames_dropped_no_receive, in.qp_counters, port);
        return;
    }
    ibv_sge targets[device_limits::max_sge];
    size_t used = 0;
    for (; used < m_max_scatter && be32toh(segments[used].lkey) != MLX5_INVALID_LKEY;
         used++) {
        targets[used].addr = be64toh(segments[used].addr);
        targets[used].length = be32toh(segments[used].byte_count);
        targets[used].lkey = be32toh(segments[used].lkey);
    }
    const ibv_wc_status status =
        context().memory_regions().scatter(m_pd, targets, used, in.bytes, in.length);
    if (status != IBV_WC_SUCCESS) {
        fail_locked(status,
                    in.steering_qp,
                    status == IBV_WC_LOC_LEN_ERR ? "a received frame did not fit its WQE"
                                                 : "a WQE named memory it may not write");
        return;
    }
    count(&frame_counters::rx_frames_delivered, in.qp_counters, port);
    complete_locked(
        static_cast<uint32_t>(in.length), IBV_WC_SUCCESS, in.wc_flags, in.steering_qp);
}

void work_queue::fail_locked(ibv_wc_status status,
                             queue_pair* steering_qp,
                             const char* reason)
{
    complete_locked(0, status, 0, steering_qp);
    trace("WQ 0x%x: %s -> ERR: %s", m_shell.verbs.wq_num, wq_state_name(m_state), reason);
    m_state = IBV_WQS_ERR;
    m_have_current = false;
}

void work_queue::complete_locked(uint32_t byte_len,
                                 ibv_wc_status status,
                                 unsigned wc_flags,
                                 queue_pair* steering_qp)
{
    completion_entry entry{};
    entry.wc.status = status;
    entry.wc.opcode = IBV_WC_RECV;
    entry.wc.byte_len = byte_len;
    entry.wc.qp_num = steering_qp->verbs()->qp_num;
    entry.wc.wc_flags = wc_flags;
    entry.qp = steering_qp;
    entry.is_send = false;
    entry.wq = this;
    if (status != IBV_WC_SUCCESS)
        count(&frame_counters::error_completions,
              steering_qp->counters(),
              context().device().port_counters());
    if (!m_cq.push(entry)) {
        m_state = IBV_WQS_ERR;
        m_have_current = false;
    }
}

indirection_table::indirection_table(device_context& context, work_queue& queue)
    : m_context(context), m_queue(queue)
{
    m_shell.verbs.context = context.verbs();
    m_shell.verbs.ind_tbl_handle = static_cast<int>(context.allocate_handle());
    m_shell.verbs.ind_tbl_num = m_shell.verbs.ind_tbl_handle;
}

indirection_table* indirection_table::from(ibv_rwq_ind_table* table)
{
    return object_shell<ibv_rwq_ind_table, indirection_table>::owner_of(table);
}

ibv_rwq_ind_table* indirection_table::create(ibv_context* context,
                                             const ibv_rwq_ind_table_init_attr& attr)
{
    device_context* emulated = device_context::from(context);
    if (emulated == nullptr || attr.comp_mask != 0 || attr.ind_tbl == nullptr) {
        errno = EINVAL;
        return nullptr;
    }
    if (attr.log_ind_tbl_size != 0)
        fail_unemulated("ibv_create_rwq_ind_table with 2^%u WQs (RSS spreading over "
                        "several WQs is not emulated; a table of one WQ is)",
                        attr.log_ind_tbl_size);
    work_queue* queue = work_queue::from(attr.ind_tbl[0]);
    if (queue == nullptr || &queue->context() != emulated) {
        errno = EINVAL;
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(emulated->control_mutex());
    auto* table = new indirection_table(*emulated, *queue);
    queue->attached_tables++;
    return table->verbs();
}

int indirection_table::destroy()
{
    std::lock_guard<std::mutex> lock(m_context.control_mutex());
    if (attached_queue_pairs != 0)
        return EBUSY;
    m_queue.attached_tables--;
    delete this;
    return 0;
}

namespace operations {

ibv_wq* create_wq(ibv_context* context, ibv_wq_init_attr* attr)
{
    if (attr == nullptr) {
        errno = EINVAL;
        return nullptr;
    }
    return work_queue::create(context, *attr, striding_layout{});
}

int modify_wq(ibv_wq* wq, ibv_wq_attr* attr)
{
    work_queue* emulated = work_queue::from(wq);
    return emulated == nullptr || attr == nullptr ? EINVAL : emulated->modify(*attr);
}

int destroy_wq(ibv_wq* wq)
{
    work_queue* emulated = work_queue::from(wq);
    return emulated == nullptr ? EINVAL : emulated->destroy();
}

ibv_rwq_ind_table* create_rwq_ind_table(ibv_context* context,
                                        ibv_rwq_ind_table_init_attr* attr)
{
    if (attr == nullptr) {
        errno = EINVAL;
        return nullptr;
    }
    return indirection_table::create(context, *attr);
}

int destroy_rwq_ind_table(ibv_rwq_ind_table* table)
{
    indirection_table* emulated = indirection_table::from(table);
    return emulated == nullptr ? EINVAL : emulated->destroy();
}

} // namespace operations
} // namespace spead_emu
