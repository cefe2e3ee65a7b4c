/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The emulator's own exports (version node SPEAD_EMU_PRIVATE_1), for tests.
#include "device.h"
#include "device_context.h"
#include "queue_pair.h"

#include <spead_emu/extensions.h>

#include <cerrno>
#include <mutex>

extern "C" {

int spead_emu_query_qp_counters(ibv_qp* qp, spead_emu_counters* counters)
{
    // Frame counters are the raw-packet QPs' (an RC QP is none: EINVAL).
    spead_emu::queue_pair* emulated = spead_emu::queue_pair::from(qp);
    if (emulated == nullptr || counters == nullptr)
        return EINVAL;
    *counters = emulated->counters().snapshot();
    return 0;
}

int spead_emu_query_port_counters(ibv_context* context, spead_emu_counters* counters)
{
    spead_emu::device_context* emulated = spead_emu::device_context::from(context);
    if (emulated == nullptr || counters == nullptr)
        return EINVAL;
    *counters = emulated->device().port_counters().snapshot();
    return 0;
}

int spead_emu_query_live_objects(ibv_context* context, spead_emu_live_objects* objects)
{
    spead_emu::device_context* emulated = spead_emu::device_context::from(context);
    if (emulated == nullptr || objects == nullptr)
        return EINVAL;
    std::lock_guard<std::mutex> lock(emulated->control_mutex());
    objects->protection_domains = emulated->live_protection_domains;
    objects->completion_channels = emulated->live_completion_channels;
    objects->completion_queues = emulated->live_completion_queues;
    objects->queue_pairs = emulated->live_queue_pairs;
    objects->memory_regions = emulated->live_memory_regions;
    objects->flows = emulated->live_flows;
    objects->counters = emulated->live_counters;
    return 0;
}

} // extern "C"
