/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "protection_domain.h"

#include "device_context.h"
#include "log.h"

#include <cerrno>
#include <mutex>

namespace spead_emu {

protection_domain::protection_domain(device_context& context, uint32_t handle)
    : m_context(context)
{
    m_shell.owner = this;
    m_shell.verbs.context = context.verbs();
    m_shell.verbs.handle = handle;
}

protection_domain* protection_domain::from(ibv_pd* pd)
{
    return object_shell<ibv_pd, protection_domain>::owner_of(pd);
}

} // namespace spead_emu

using spead_emu::device_context;
using spead_emu::protection_domain;

extern "C" {

ibv_pd* ibv_alloc_pd(ibv_context* context)
{
    device_context* emulated = device_context::from(context);
    if (emulated == nullptr) {
        errno = EINVAL;
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(emulated->control_mutex());
    auto* pd = new protection_domain(*emulated, emulated->allocate_handle());
    emulated->live_protection_domains++;
    return pd->verbs();
}

int ibv_dealloc_pd(ibv_pd* pd)
{
    protection_domain* emulated = protection_domain::from(pd);
    if (emulated == nullptr)
        return EINVAL;
    device_context& context = emulated->context();
    std::lock_guard<std::mutex> lock(context.control_mutex());
    if (emulated->live_memory_regions || emulated->live_queue_pairs) {
        // The kernel refuses too (the PD's use count is not zero).
        spead_emu::trace("ibv_dealloc_pd refused: %d MR(s) and %d QP(s) still use it",
                         emulated->live_memory_regions,
                         emulated->live_queue_pairs);
        return EBUSY;
    }
    context.live_protection_domains--;
    delete emulated;
    return 0;
}

} // extern "C"
