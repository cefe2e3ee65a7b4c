/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// A completion queue: a fixed ring of completions, armed for one event at a time, that
// overruns (and says so) when the application lets it fill up.
#ifndef SPEAD_EMU_COMPLETION_QUEUE_H
#define SPEAD_EMU_COMPLETION_QUEUE_H

#include "object_shell.h"

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace spead_emu {

class completion_channel;
class device_context;
class queue_pair;
class rc_queue_pair;
class work_queue;

// A completion and the work-queue slot it frees when the application polls it (a send
// queue slot is reusable only once a completion at or after it has been polled).
// Completions of a receive WQ (`wq` set) free nothing: the application tells that NIC
// through the WQ's doorbell record which WQEs it may use.
struct completion_entry {
    ibv_wc wc;
    queue_pair* qp;
    bool is_send;
    uint64_t work_queue_index;
    work_queue* wq = nullptr;
    rc_queue_pair* rc_qp = nullptr; // set instead of qp for an RC QP's completions
};

class completion_queue
{
public:
    completion_queue(device_context& context,
                     int capacity,
                     void* cq_context,
                     completion_channel* channel);
    ~completion_queue();

    // ibv_create_cq's checks and accounting: nullptr with errno set.
    static completion_queue* create(ibv_context* context,
                                    int cqe,
                                    void* cq_context,
                                    ibv_comp_channel* channel,
                                    int comp_vector);
    static completion_queue* from(ibv_cq* cq);
    // Every CQ is an ibv_cq_ex (whose first members are an ibv_cq's); its poll
    // functions are filled only for CQs made with ibv_create_cq_ex.
    ibv_cq* verbs() { return ibv_cq_ex_to_cq(&m_shell.verbs); }
    ibv_cq_ex* verbs_ex() { return &m_shell.verbs; }
    // ibv_create_cq_ex's wc_flags: 0, or EOPNOTSUPP/EINVAL for what it cannot give.
    int enable_extended_polling(uint64_t wc_flags);
    device_context& context() { return m_context; }
    completion_channel* channel() { return m_channel; }

    // Called by the NIC. False when the completion was lost because the CQ overran
    // (the caller's QP then goes to the error state).
    bool push(const completion_entry& entry);
    // ibv_poll_cq: completions taken, or -1 once an overrun CQ has been drained.
    int poll(int max_entries, ibv_wc* completions);
    // ibv_start_poll / ibv_next_poll: 0 with the completion in current(), ENOENT when
    // there is none, EOVERFLOW once an overrun CQ has been drained.
    int poll_one();
    const ibv_wc& current() const { return m_current; }
    int arm(bool solicited_only);
    // An injected overrun (SPEAD_EMU_FAULT_CQ_OVERRUN): as if the ring had filled.
    // \return false if it had already overrun. Its IBV_EVENT_CQ_ERR is the caller's to
    // post (fault_injection.cc may hold it back).
    bool inject_overrun();
    // Forget the completions of a QP being reset or destroyed.
    void remove_entries_of(const queue_pair* qp);
    // Forget the completions of a WQ leaving RESET (what mlx5's provider does).
    void remove_entries_of(const work_queue* wq);
    void remove_entries_of(const rc_queue_pair* qp);

    void count_completion_event_read() { m_completion_events_read++; }
    void count_async_event_read() { m_async_events_read++; }
    // Events the application read but has not acknowledged with ibv_ack_cq_events or
    // ibv_ack_async_event; destroying the CQ on hardware blocks until these are zero.
    uint32_t unacknowledged_completion_events();
    uint32_t unacknowledged_async_events();

    // QPs using this CQ (ibv_destroy_cq refuses with EBUSY while any remain). Guarded
    // by the context's control mutex.
    int attached_queue_pairs = 0;

private:
    void take_locked(ibv_wc& completion);
    void remove_entries_if(const std::function<bool(const completion_entry&)>& unwanted);

    synchronised_shell<ibv_cq_ex, completion_queue> m_shell{ this };
    ibv_wc m_current{}; // of the extended poll in progress
    device_context& m_context;
    completion_channel* m_channel;

    std::mutex m_mutex;
    std::vector<completion_entry> m_ring;
    size_t m_head = 0;
    size_t m_count = 0;
    bool m_armed = false;
    bool m_armed_solicited_only = false;
    bool m_overrun = false;

    std::atomic<uint32_t> m_completion_events_read{ 0 };
    std::atomic<uint32_t> m_async_events_read{ 0 };
};

} // namespace spead_emu

#endif
