/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// An opened emulated device: the verbs_context applications hold, with the operation
// tables the header-inline verbs dispatch through.
#ifndef SPEAD_EMU_DEVICE_CONTEXT_H
#define SPEAD_EMU_DEVICE_CONTEXT_H

#include "async_events.h"
#include "memory_region.h"
#include "unique_fd.h"

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace spead_emu {

class completion_queue;
class emulated_device;
class queue_pair;

class device_context
{
public:
    // nullptr with errno set if the fds cannot be created.
    static device_context* open(emulated_device& device);
    static device_context* from(ibv_context* context);

    ibv_context* verbs() { return &m_shell.verbs.context; }
    emulated_device& device() { return m_device; }
    memory_region_table& memory_regions() { return m_memory_regions; }
    async_event_queue& async_events() { return m_async_events; }
    uint32_t allocate_handle() { return m_next_handle++; }
    uint32_t allocate_memory_key();

    // Serialises creating and destroying objects, and the live counts below that make
    // destroy calls refuse (EBUSY) while dependent objects exist.
    std::mutex& control_mutex() { return m_control_mutex; }
    int live_protection_domains = 0;
    int live_completion_queues = 0;
    int live_completion_channels = 0;
    // Not needed for the EBUSY rules (their owners count them), but reported to tests
    // (spead_emu_query_live_objects) so they can check that nothing leaked.
    int live_queue_pairs = 0;
    int live_memory_regions = 0;
    int live_flows = 0;
    int live_counters = 0;
    // The QPs and CQs that exist, for injected faults to reach (guarded likewise).
    std::vector<queue_pair*> queue_pairs;
    std::vector<completion_queue*> completion_queues;

    // 0, or EBUSY (loudly) while objects remain.
    int close();

private:
    explicit device_context(emulated_device& device);

    // verbs_get_ctx() finds the verbs_context from its trailing ibv_context; the owner
    // pointer after it leads back here.
    struct context_shell {
        verbs_context verbs{};
        device_context* owner = nullptr;
    };

    context_shell m_shell;
    emulated_device& m_device;
    unique_fd m_command_fd;
    async_event_queue m_async_events;
    memory_region_table m_memory_regions;
    std::mutex m_control_mutex;
    std::atomic<uint32_t> m_next_handle{ 1 };
    std::atomic<uint32_t> m_next_memory_key{ 0x2a };
};

// The operations reached through context->ops and the verbs_context, defined next to
// the objects they work on.
namespace operations {
int poll_cq(ibv_cq* cq, int entries, ibv_wc* completions);
int req_notify_cq(ibv_cq* cq, int solicited_only);
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
ibv_flow* create_flow(ibv_qp* qp, ibv_flow_attr* attr);
int destroy_flow(ibv_flow* flow);
int modify_qp_rate_limit(ibv_qp* qp, ibv_qp_rate_limit_attr* attr);
// The cx5 model's extended verbs (device.h: SPEAD_EMU_MODEL=cx5).
ibv_cq_ex* create_cq_ex(ibv_context* context, ibv_cq_init_attr_ex* attr);
ibv_wq* create_wq(ibv_context* context, ibv_wq_init_attr* attr);
int modify_wq(ibv_wq* wq, ibv_wq_attr* attr);
int destroy_wq(ibv_wq* wq);
ibv_rwq_ind_table* create_rwq_ind_table(ibv_context* context,
                                        ibv_rwq_ind_table_init_attr* attr);
int destroy_rwq_ind_table(ibv_rwq_ind_table* table);
ibv_qp* create_qp_ex(ibv_context* context, ibv_qp_init_attr_ex* attr);
int query_port(ibv_context* context, uint8_t port, ibv_port_attr* attr, size_t size);
int query_device_ex(ibv_context* context,
                    const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr,
                    size_t size);
} // namespace operations

} // namespace spead_emu

#endif
