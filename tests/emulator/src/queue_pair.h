/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// A RAW_PACKET queue pair: its state machine, send and receive queues, flow steering
// rules, and the completions it produces. The NIC thread moves the frames.
#ifndef SPEAD_EMU_QUEUE_PAIR_H
#define SPEAD_EMU_QUEUE_PAIR_H

#include "counters.h"
#include "flow_rule.h"
#include "queue_pair_core.h"
#include "work_ring.h"

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace spead_emu {

class indirection_table;
class nic_thread;
class steering_flow;

// One posted send WR as the NIC takes it off the send queue.
struct send_work {
    uint64_t wr_id = 0;
    uint64_t index = 0;      // position in the send queue, counted since creation
    uint64_t generation = 0; // changes on reset: completions of older work are void
    bool signalled = false;
    bool offload_checksums = false; // IBV_SEND_IP_CSUM
    bool is_inline = false;
    std::vector<ibv_sge> sges;
    std::vector<uint8_t> inline_data;
};

class queue_pair : public queue_pair_core<queue_pair, send_work>
{
public:
    // ibv_create_qp: nullptr with errno set.
    static ibv_qp* create(protection_domain& pd, ibv_qp_init_attr& attr);
    // ibv_create_qp_ex of the cx5 model: a receive-only RAW_PACKET QP hashing into an
    // indirection table (RSS). It has no send queue and no state of its own: frames
    // its flows steer go to the table's WQ, which decides by its own state.
    static ibv_qp* create_with_rx_hash(device_context& context,
                                       ibv_qp_init_attr_ex& attr);
    static queue_pair* from(ibv_qp* qp);
    ~queue_pair();

    frame_counters& counters() { return m_counters; }

    int modify(const ibv_qp_attr& attr, int mask);
    int query(ibv_qp_attr& attr, ibv_qp_init_attr& init_attr);
    int destroy();
    int post_send(ibv_send_wr* wr, ibv_send_wr** bad_wr);
    int post_receive(ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
    void attach(steering_flow& flow);
    void detach(steering_flow& flow);

    // Polling a completion frees the slots up to and including its WR.
    void release_send_slots_through(uint64_t index);
    void release_receive_slots_through(uint64_t index);

    // --- the NIC thread's side ---
    // A frame from the wire: steered into the oldest posted receive if a flow matches.
    void
    deliver_frame(const uint8_t* frame, size_t length, bool l4_checksum_left_to_hardware);
    // The next send to transmit; false when there is none (or the QP is not in RTS).
    bool take_next_send(send_work& work);
    // Reads the frame of `work` from registered memory into `frame`.
    ibv_wc_status
    gather(const send_work& work, uint8_t* frame, size_t capacity, size_t& length);
    void finish_send(const send_work& work, ibv_wc_status status);
    // In the error state every outstanding WR completes with IBV_WC_WR_FLUSH_ERR.
    void flush_if_in_error();
    // A frame held back (reordered) goes to the QP when the wire is idle.
    void release_held_frame();

    // --- injected faults (fault_injection.cc) ---
    // To ERR as a NIC puts a QP there on an internal error; false for an RX-hash QP
    // (its WQ holds the state).
    bool break_for_fault(const char* reason);
    bool uses(const completion_queue& cq) const
    {
        return &m_send_cq == &cq || &m_receive_cq == &cq;
    }

private:
    friend class queue_pair_core<queue_pair, send_work>;

    queue_pair(protection_domain& pd,
               completion_queue& send_cq,
               completion_queue& receive_cq,
               const ibv_qp_init_attr& attr,
               std::unique_ptr<nic_thread> nic);
    // With CAP_NET_RAW (else EPERM), the packet socket for the QP's netdev; nullptr
    // with errno set when it cannot be had.
    static std::unique_ptr<nic_thread> open_nic(device_context& context);

    bool receives_allowed() const;
    // Steers a frame \p flow matched into a posted receive (or drops and counts it).
    void steer_locked(steering_flow& flow,
                      const uint8_t* frame,
                      size_t length,
                      bool l4_checksum_left_to_hardware);
    // Delivers the frame held back by an injected reorder, if any.
    void release_held_frame_locked();
    void enter_error_locked(const char* reason);
    void reset_locked() { reset_queues_locked(); }
    // Completes the work request at \p index of the send or the receive queue.
    void complete_send_locked(uint64_t wr_id, ibv_wc_status status, uint64_t index);
    void complete_receive_locked(const receive_slot& slot,
                                 ibv_wc_status status,
                                 uint64_t index,
                                 uint32_t byte_length = 0,
                                 unsigned flags = 0);
    void complete_locked(completion_queue& cq, completion_entry& entry);
    // Completes every work request the NIC has not taken with IBV_WC_WR_FLUSH_ERR.
    template <typename Slot>
    void flush_locked(work_ring<Slot>& ring);

    // Under the core's m_mutex too:
    std::vector<steering_flow*> m_flows;
    indirection_table* m_rx_hash_table = nullptr; // RX-hash QPs receive through it
    frame_counters m_counters;
    uint64_t m_fault_random; // injected frame faults draw from it
    struct held_frame {
        std::vector<uint8_t> bytes; // reserved at creation: holding allocates nothing
        size_t length = 0;
        bool l4_checksum_left_to_hardware = false;
        bool holding = false;
    } m_held;
    std::unique_ptr<nic_thread> m_nic; // stopped first in destroy()
};

} // namespace spead_emu

#endif
