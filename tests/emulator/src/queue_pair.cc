/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "queue_pair.h"

#include "capabilities.h"
#include "completion_queue.h"
#include "device.h"
#include "device_context.h"
#include "enum_names.h"
#include "flow_counters.h"
#include "log.h"
#include "netdev.h"
#include "nic_thread.h"
#include "protection_domain.h"
#include "rc_queue_pair.h"
#include "steering_flow.h"
#include "verbs_lifecycle.h"
#include "work_posting.h"
#include "work_queue.h"

#include <linux/capability.h>

#include <type_traits>
#include <algorithm>
#include <cerrno>
#include <cstring>

namespace spead_emu {
namespace {

// The transitions a RAW_PACKET QP takes (IB spec QP state table, as the kernel checks).
bool transition_allowed(ibv_qp_state from, ibv_qp_state to)
{
    switch (to) {
    case IBV_QPS_RESET:
    case IBV_QPS_ERR:
        return true;
    case IBV_QPS_INIT:
        return from == IBV_QPS_RESET || from == IBV_QPS_INIT;
    case IBV_QPS_RTR:
        return from == IBV_QPS_INIT;
    case IBV_QPS_RTS:
        return from == IBV_QPS_RTR || from == IBV_QPS_RTS;
    default:
        return false; // SQD/SQE are not emulated; nothing a raw transport needs
    }
}

} // namespace

queue_pair::queue_pair(protection_domain& pd,
                       completion_queue& send_cq,
                       completion_queue& receive_cq,
                       const ibv_qp_init_attr& attr,
                       std::unique_ptr<nic_thread> nic)
    : queue_pair_core(
          pd, send_cq, receive_cq, attr, pd.context().device().allocate_qp_number()),
      m_nic(std::move(nic))
{
    m_fault_random = 0x9e3779b97f4a7c15ull ^ m_shell.verbs.qp_num;
    m_held.bytes.resize(m_nic->max_frame_size());
}

queue_pair::~queue_pair() = default;

queue_pair* queue_pair::from(ibv_qp* qp)
{
    // An RC QP's shell belongs to an rc_queue_pair: flows, counters and the like are
    // refused on it (EINVAL) as for any QP the emulator does not own.
    if (qp != nullptr && qp->qp_type == IBV_QPT_RC)
        return nullptr;
    return object_shell<ibv_qp, queue_pair>::owner_of(qp);
}

ibv_qp* queue_pair::create(protection_domain& pd, ibv_qp_init_attr& attr)
{
    if (attr.qp_type != IBV_QPT_RAW_PACKET)
        fail_unemulated("ibv_create_qp with qp_type %d (only IBV_QPT_RAW_PACKET and "
                        "IBV_QPT_RC QPs are emulated)",
                        attr.qp_type);
    const queues cqs = queues_for(pd, attr, 0);
    if (!cqs)
        return nullptr;
    device_context& context = pd.context();
    std::unique_ptr<nic_thread> nic = open_nic(context);
    if (nic == nullptr)
        return nullptr;
    std::lock_guard<std::mutex> lock(context.control_mutex());
    auto* qp = new queue_pair(pd, *cqs.send, *cqs.receive, attr, std::move(nic));
    context.queue_pairs.push_back(qp);
    qp->m_nic->start(*qp);
    trace("QP 0x%x on %s: send %u x %u SGE, receive %u x %u SGE",
          qp->verbs()->qp_num,
          context.device().netdev().c_str(),
          attr.cap.max_send_wr,
          attr.cap.max_send_sge,
          attr.cap.max_recv_wr,
          attr.cap.max_recv_sge);
    // attr.cap already holds what was granted: exactly what was asked for.
    return qp->verbs();
}

std::unique_ptr<nic_thread> queue_pair::open_nic(device_context& context)
{
    std::unique_ptr<nic_thread> nic;
    int error = EPERM;
    // The kernel's rule for raw packet QPs, checked against the calling thread.
    if (!has_effective_capability(CAP_NET_RAW)) {
        trace("raw packet QP: no CAP_NET_RAW, EPERM");
    } else {
        const auto netdev = query_netdev(context.device().netdev());
        error = netdev ? nic_thread::open(netdev->ifindex, netdev->mtu, nic) : ENODEV;
    }
    if (error != 0)
        errno = error;
    return nic;
}

ibv_qp* queue_pair::create_with_rx_hash(device_context& context,
                                        ibv_qp_init_attr_ex& attr)
{
    constexpr uint32_t rss =
        IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH;
    if ((attr.comp_mask & ~uint32_t{ IBV_QP_INIT_ATTR_CREATE_FLAGS }) != rss ||
        ((attr.comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr.create_flags != 0))
        fail_unemulated("ibv_create_qp_ex with comp_mask 0x%x (only a RAW_PACKET QP with "
                        "PD, IND_TABLE and RX_HASH, and no create flags, is emulated)",
                        attr.comp_mask);
    if (attr.qp_type != IBV_QPT_RAW_PACKET)
        fail_unemulated("ibv_create_qp_ex with qp_type %d (only IBV_QPT_RAW_PACKET QPs "
                        "are emulated)",
                        attr.qp_type);
    protection_domain* pd = protection_domain::from(attr.pd);
    indirection_table* table = indirection_table::from(attr.rwq_ind_tbl);
    // mlx5: an RSS QP receives only (no send queue, no CQs of its own) and hashes
    // with Toeplitz over a 40-byte key.
    if (pd == nullptr || table == nullptr || &pd->context() != &context ||
        attr.send_cq != nullptr || attr.recv_cq != nullptr || attr.srq != nullptr ||
        attr.cap.max_send_wr != 0 || attr.cap.max_recv_wr != 0 ||
        attr.rx_hash_conf.rx_hash_key_len != 40 ||
        attr.rx_hash_conf.rx_hash_key == nullptr) {
        errno = EINVAL;
        return nullptr;
    }
    if (attr.rx_hash_conf.rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ) {
        errno = EOPNOTSUPP;
        return nullptr;
    }
    std::unique_ptr<nic_thread> nic = open_nic(context);
    if (nic == nullptr)
        return nullptr;
    ibv_qp_init_attr plain{};
    plain.qp_context = attr.qp_context;
    plain.qp_type = IBV_QPT_RAW_PACKET;
    completion_queue& cq = table->only_queue().cq(); // holds its completions
    std::lock_guard<std::mutex> lock(context.control_mutex());
    auto* qp = new queue_pair(*pd, cq, cq, plain, std::move(nic));
    qp->m_rx_hash_table = table;
    table->attached_queue_pairs++;
    context.queue_pairs.push_back(qp);
    qp->m_nic->start(*qp);
    trace("QP 0x%x on %s: RX hash over WQ 0x%x",
          qp->verbs()->qp_num,
          context.device().netdev().c_str(),
          table->only_queue().verbs()->wq_num);
    return qp->verbs();
}

int queue_pair::modify(const ibv_qp_attr& attr, int mask)
{
    const int known = IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_PORT;
    if (context().device().faults().fatal())
        return EIO;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (mask & IBV_QP_RATE_LIMIT) {
            warn("ibv_modify_qp(IBV_QP_RATE_LIMIT): hardware packet pacing is not "
                 "emulated; EOPNOTSUPP, as from a NIC without pacing support");
            return EOPNOTSUPP;
        }
        if ((mask & ~known) != 0)
            return EINVAL; // attributes a RAW_PACKET QP does not take
        if ((mask & IBV_QP_CUR_STATE) && attr.cur_qp_state != m_state)
            return EINVAL;
        if ((mask & IBV_QP_PORT) && attr.port_num != 1)
            return EINVAL;
        const ibv_qp_state target = (mask & IBV_QP_STATE) ? attr.qp_state : m_state;
        if (!transition_allowed(m_state, target))
            return EINVAL;
        if (m_state == IBV_QPS_RESET && target == IBV_QPS_INIT && !(mask & IBV_QP_PORT))
            return EINVAL; // RESET->INIT of a raw packet QP needs the port
        move_to_locked(target, "QP");
    }
    m_nic->ring_doorbell();
    return 0;
}

int queue_pair::query(ibv_qp_attr& attr, ibv_qp_init_attr& init_attr)
{
    return answer_query(attr, init_attr, IBV_QPT_RAW_PACKET, [](ibv_qp_attr& own) {
        own = ibv_qp_attr{};
        own.port_num = 1;
    });
}

int queue_pair::destroy()
{
    device_context& context = this->context();
    std::lock_guard<std::mutex> control(context.control_mutex());
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_flows.empty()) {
            trace("ibv_destroy_qp(0x%x) refused: %zu flow(s) still steer to it",
                  m_shell.verbs.qp_num,
                  m_flows.size());
            return EBUSY; // the kernel refuses too: flows hold a reference on the QP
        }
    }
    m_nic->stop();
    if (m_rx_hash_table != nullptr)
        m_rx_hash_table->attached_queue_pairs--;
    detach_locked();
    context.queue_pairs.erase(
        std::find(context.queue_pairs.begin(), context.queue_pairs.end(), this));
    const auto counted = m_counters.snapshot();
    if (counted.rx_frames_dropped_no_receive || counted.rx_frames_dropped_qp_not_ready ||
        counted.rx_frames_dropped_oversize || counted.rx_frames_dropped_socket_overflow ||
        counted.tx_frames_lost)
        warn("QP 0x%x destroyed: %llu frame(s) received, %llu dropped with no receive "
             "posted, %llu dropped while not in RTR/RTS, %llu oversize, %llu lost to "
             "emulator socket overflow; %llu sent, %llu lost on the wire",
             m_shell.verbs.qp_num,
             static_cast<unsigned long long>(counted.rx_frames_delivered),
             static_cast<unsigned long long>(counted.rx_frames_dropped_no_receive),
             static_cast<unsigned long long>(counted.rx_frames_dropped_qp_not_ready),
             static_cast<unsigned long long>(counted.rx_frames_dropped_oversize),
             static_cast<unsigned long long>(counted.rx_frames_dropped_socket_overflow),
             static_cast<unsigned long long>(counted.tx_frames_sent),
             static_cast<unsigned long long>(counted.tx_frames_lost));
    return destroyed("QP");
}

int queue_pair::post_send(ibv_send_wr* wr, ibv_send_wr** bad_wr)
{
    const auto accept = [this](const ibv_send_wr& wr) {
        if (wr.opcode == IBV_WR_TSO)
            fail_unemulated("IBV_WR_TSO (TCP segmentation offload)");
        if (wr.opcode != IBV_WR_SEND)
            return EINVAL;
        send_work* slot = nullptr; // too many SGEs: ENOMEM, as mlx5
        if (const int error = claim_send_locked(wr, slot))
            return error;
        slot->offload_checksums = (wr.send_flags & IBV_SEND_IP_CSUM) != 0;
        return 0;
    };
    return post_sends(wr, bad_wr, accept, [this] { m_nic->ring_doorbell(); });
}

int queue_pair::post_receive(ibv_recv_wr* wr, ibv_recv_wr** bad_wr)
{
    return post_receives(wr, bad_wr, [this] { m_nic->ring_doorbell(); });
}

void queue_pair::attach(steering_flow& flow)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_flows.push_back(&flow);
}

void queue_pair::detach(steering_flow& flow)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_flows.erase(std::remove(m_flows.begin(), m_flows.end(), &flow), m_flows.end());
}

void queue_pair::release_send_slots_through(uint64_t index)
{
    m_send.release_through(index);
}

void queue_pair::release_receive_slots_through(uint64_t index)
{
    m_receive.release_through(index);
}

bool queue_pair::receives_allowed() const
{
    return m_state == IBV_QPS_RTR || m_state == IBV_QPS_RTS;
}

void queue_pair::deliver_frame(const uint8_t* frame,
                               size_t length,
                               bool l4_checksum_left_to_hardware)
{
    const parsed_frame parsed = parse_frame(frame, length);
    emulated_device& device = context().device();
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto steered =
        std::find_if(m_flows.begin(), m_flows.end(), [&](steering_flow* flow) {
            return flow->rule().matches(parsed);
        });
    if (steered == m_flows.end())
        return; // not for this QP: on hardware it would go to the kernel or elsewhere
    // Injected faults of the link and the network act before the NIC sees the frame
    // (its flow counters do not count a frame lost on the way).
    frame_counters& port = device.port_counters();
    if (device.faults().port_down()) {
        count(&frame_counters::rx_frames_dropped_port_down, m_counters, port);
        return;
    }
    switch (device.faults().next_frame_fate(m_fault_random)) {
    case frame_fate::drop:
        count(&frame_counters::rx_frames_dropped_injected, m_counters, port);
        return;
    case frame_fate::duplicate:
        count(&frame_counters::rx_frames_duplicated_injected, m_counters, port);
        steer_locked(**steered, frame, length, l4_checksum_left_to_hardware);
        break;
    case frame_fate::hold:
        if (!m_held.holding && length <= m_held.bytes.size()) {
            count(&frame_counters::rx_frames_reordered_injected, m_counters, port);
            memcpy(m_held.bytes.data(), frame, length);
            m_held.length = length;
            m_held.l4_checksum_left_to_hardware = l4_checksum_left_to_hardware;
            m_held.holding = true;
            return; // it follows the next frame
        }
        break;
    case frame_fate::deliver:
        break;
    }
    steer_locked(**steered, frame, length, l4_checksum_left_to_hardware);
    release_held_frame_locked();
}

void queue_pair::release_held_frame()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    release_held_frame_locked();
}

void queue_pair::release_held_frame_locked()
{
    if (!m_held.holding)
        return;
    m_held.holding = false;
    const parsed_frame parsed = parse_frame(m_held.bytes.data(), m_held.length);
    const auto steered =
        std::find_if(m_flows.begin(), m_flows.end(), [&](steering_flow* flow) {
            return flow->rule().matches(parsed);
        });
    if (steered != m_flows.end()) // else its flow went meanwhile, as the frame would
        steer_locked(**steered,
                     m_held.bytes.data(),
                     m_held.length,
                     m_held.l4_checksum_left_to_hardware);
}

void queue_pair::steer_locked(steering_flow& flow,
                              const uint8_t* frame,
                              size_t length,
                              bool l4_checksum_left_to_hardware)
{
    frame_counters& port = context().device().port_counters();
    // A flow's counters count every frame steered to it: one dropped below for want
    // of a receive counts too (matched − completed is what the NIC dropped).
    // Overlapping rules: the first created wins. Counted as this returns, once the
    // frame is completed or dropped: hardware completes a frame microseconds after
    // counting it, but this thread can be descheduled for milliseconds in between,
    // which a reader (whose settle time is 1 ms) would take for a drop.
    struct count_when_settled {
        flow_counters* counters;
        size_t length;
        ~count_when_settled()
        {
            if (counters != nullptr)
                counters->count_frame(length);
        }
    } counted{ flow.counters(), length };
    if (m_rx_hash_table != nullptr) {
        const unsigned flags =
            offloaded_checksums_valid(frame, length, l4_checksum_left_to_hardware)
                ? IBV_WC_IP_CSUM_OK
                : 0;
        m_rx_hash_table->only_queue().deliver_frame(
            { frame, length, flags, this, m_counters });
        return;
    }
    if (!receives_allowed()) {
        count(&frame_counters::rx_frames_dropped_qp_not_ready, m_counters, port);
        trace("QP 0x%x in %s: frame of %zu bytes dropped",
              m_shell.verbs.qp_num,
              qp_state_name(m_state),
              length);
        return;
    }
    if (m_receive.taken == m_receive.posted) {
        count(&frame_counters::rx_frames_dropped_no_receive, m_counters, port);
        trace("QP 0x%x: no receive posted, frame of %zu bytes dropped",
              m_shell.verbs.qp_num,
              length);
        return;
    }
    const uint64_t index = m_receive.taken++;
    const receive_slot& slot = m_receive.at(index);
    const ibv_wc_status status = context().memory_regions().scatter(
        m_pd, slot.sges.data(), slot.sges.size(), frame, length);
    if (status != IBV_WC_SUCCESS) {
        complete_receive_locked(slot, status, index);
        enter_error_locked(status == IBV_WC_LOC_LEN_ERR
                               ? "a received frame did not fit its receive WR"
                               : "a receive WR named memory it may not write");
        return;
    }
    count(&frame_counters::rx_frames_delivered, m_counters, port);
    const unsigned flags =
        offloaded_checksums_valid(frame, length, l4_checksum_left_to_hardware)
            ? IBV_WC_IP_CSUM_OK
            : 0;
    complete_receive_locked(
        slot, IBV_WC_SUCCESS, index, static_cast<uint32_t>(length), flags);
}

bool queue_pair::take_next_send(send_work& work)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_state != IBV_QPS_RTS || m_send.taken == m_send.posted)
        return false;
    const send_work& slot = m_send.at(m_send.taken);
    work.wr_id = slot.wr_id;
    work.signalled = slot.signalled;
    work.offload_checksums = slot.offload_checksums;
    work.is_inline = slot.is_inline;
    work.sges.assign(slot.sges.begin(), slot.sges.end());
    work.inline_data.assign(slot.inline_data.begin(), slot.inline_data.end());
    work.index = m_send.taken++;
    work.generation = m_generation;
    return true;
}

ibv_wc_status
queue_pair::gather(const send_work& work, uint8_t* frame, size_t capacity, size_t& length)
{
    if (work.is_inline) {
        length = work.inline_data.size();
        if (length > capacity)
            return IBV_WC_LOC_LEN_ERR;
        memcpy(frame, work.inline_data.data(), length);
        return IBV_WC_SUCCESS;
    }
    return context().memory_regions().gather(
        m_pd, work.sges.data(), work.sges.size(), frame, capacity, length);
}

void queue_pair::finish_send(const send_work& work, ibv_wc_status status)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (work.generation != m_generation)
        return; // the QP was reset while the frame was on its way
    if (status == IBV_WC_SUCCESS) {
        if (work.signalled)
            complete_send_locked(work.wr_id, status, work.index);
        return;
    }
    // Errors complete even unsignalled WRs, and break the QP.
    complete_send_locked(work.wr_id, status, work.index);
    enter_error_locked(status == IBV_WC_LOC_PROT_ERR
                           ? "a send WR named memory that is not registered to its PD"
                           : "a send WR failed");
}

void queue_pair::flush_if_in_error()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_state != IBV_QPS_ERR)
        return;
    flush_locked(m_receive);
    flush_locked(m_send);
}

template <typename Slot>
void queue_pair::flush_locked(work_ring<Slot>& ring)
{
    while (ring.taken < ring.posted) {
        const uint64_t index = ring.taken++;
        if constexpr (std::is_same_v<Slot, send_work>)
            complete_send_locked(ring.at(index).wr_id, IBV_WC_WR_FLUSH_ERR, index);
        else
            complete_receive_locked(ring.at(index), IBV_WC_WR_FLUSH_ERR, index);
    }
}

bool queue_pair::break_for_fault(const char* reason)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_rx_hash_table != nullptr)
        return false;
    enter_error_locked(reason);
    return true;
}

void queue_pair::enter_error_locked(const char* reason)
{
    if (m_state == IBV_QPS_ERR)
        return;
    trace("QP 0x%x: %s -> ERR: %s", m_shell.verbs.qp_num, qp_state_name(m_state), reason);
    m_state = IBV_QPS_ERR;
    m_nic->ring_doorbell(); // the NIC flushes what is outstanding
}

void queue_pair::complete_send_locked(uint64_t wr_id,
                                      ibv_wc_status status,
                                      uint64_t index)
{
    completion_entry entry{};
    entry.wc.wr_id = wr_id;
    entry.wc.status = status;
    entry.wc.opcode = IBV_WC_SEND;
    entry.is_send = true;
    entry.work_queue_index = index;
    complete_locked(m_send_cq, entry);
}

void queue_pair::complete_receive_locked(const receive_slot& slot,
                                         ibv_wc_status status,
                                         uint64_t index,
                                         uint32_t byte_length,
                                         unsigned flags)
{
    completion_entry entry{};
    entry.wc.wr_id = slot.wr_id;
    entry.wc.status = status;
    entry.wc.opcode = IBV_WC_RECV;
    entry.wc.byte_len = byte_length;
    entry.wc.wc_flags = flags;
    entry.work_queue_index = index;
    complete_locked(m_receive_cq, entry);
}

void queue_pair::complete_locked(completion_queue& cq, completion_entry& entry)
{
    entry.qp = this;
    if (entry.wc.status != IBV_WC_SUCCESS && entry.wc.status != IBV_WC_WR_FLUSH_ERR)
        count(&frame_counters::error_completions,
              m_counters,
              context().device().port_counters());
    if (!push_completion_locked(cq, entry, "QP"))
        enter_error_locked("its completion queue overran");
}

namespace operations {

// RC QPs are a peer of the raw-packet ones behind the same verbs: one test per call
// (per batch of WRs) picks the object.
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr)
{
    if (qp->qp_type == IBV_QPT_RC)
        return rc_queue_pair::from(qp)->post_send(wr, bad_wr);
    return queue_pair::from(qp)->post_send(wr, bad_wr);
}

int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr)
{
    if (qp->qp_type == IBV_QPT_RC)
        return rc_queue_pair::from(qp)->post_receive(wr, bad_wr);
    return queue_pair::from(qp)->post_receive(wr, bad_wr);
}

ibv_qp* create_qp_ex(ibv_context* context, ibv_qp_init_attr_ex* attr)
{
    device_context* emulated = owner_given<device_context>(context, attr);
    return emulated == nullptr ? nullptr
                               : queue_pair::create_with_rx_hash(*emulated, *attr);
}

int modify_qp_rate_limit(ibv_qp*, ibv_qp_rate_limit_attr*)
{
    warn("ibv_modify_qp_rate_limit: hardware packet pacing is not emulated; EOPNOTSUPP, "
         "as from a NIC without pacing support");
    return EOPNOTSUPP;
}

} // namespace operations
} // namespace spead_emu

using spead_emu::protection_domain;
using spead_emu::queue_pair;
using spead_emu::rc_queue_pair;

extern "C" {

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* qp_init_attr)
{
    protection_domain* domain =
        spead_emu::owner_given<protection_domain>(pd, qp_init_attr);
    if (domain == nullptr)
        return nullptr;
    if (qp_init_attr->qp_type == IBV_QPT_RC)
        return rc_queue_pair::create(*domain, *qp_init_attr);
    return queue_pair::create(*domain, *qp_init_attr);
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask)
{
    if (qp != nullptr && qp->qp_type == IBV_QPT_RC)
        return attr == nullptr ? EINVAL
                               : rc_queue_pair::from(qp)->modify(*attr, attr_mask);
    queue_pair* emulated = queue_pair::from(qp);
    return emulated == nullptr || attr == nullptr ? EINVAL
                                                  : emulated->modify(*attr, attr_mask);
}

int ibv_query_qp(ibv_qp* qp,
                 ibv_qp_attr* attr,
                 int attr_mask,
                 ibv_qp_init_attr* init_attr)
{
    if (qp == nullptr || attr == nullptr || init_attr == nullptr)
        return EINVAL;
    const int status = qp->qp_type == IBV_QPT_RC
                           ? rc_queue_pair::from(qp)->query(*attr, *init_attr)
                           : queue_pair::from(qp)->query(*attr, *init_attr);
    // As rdma-core: a query refreshes the state the application sees in qp->state
    // (which an error completion changed behind its back).
    if (status == 0 && (attr_mask & IBV_QP_STATE))
        qp->state = attr->qp_state;
    return status;
}

int ibv_destroy_qp(ibv_qp* qp)
{
    if (qp != nullptr && qp->qp_type == IBV_QPT_RC)
        return rc_queue_pair::from(qp)->destroy();
    queue_pair* emulated = queue_pair::from(qp);
    return emulated == nullptr ? EINVAL : emulated->destroy();
}

} // extern "C"
