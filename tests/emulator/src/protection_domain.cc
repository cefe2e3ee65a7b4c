/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "protection_domain.h"

#include "device_context.h"
#include "log.h"
#include "verbs_lifecycle.h"

#include <cerrno>
#include <mutex>

namespace spead_emu {

protection_domain::protection_domain(device_context& context, uint32_t handle)
    : m_context(context)
{
    m_shell.verbs.context = context.verbs();
    m_shell.verbs.handle = handle;
}

void protection_domain::adopt(ibv_context*& context, ibv_pd*& pd, uint32_t& handle)
{
    context = m_context.verbs();
    pd = verbs();
    handle = m_context.allocate_handle();
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
    return spead_emu::create_in_context(
        context, &device_context::live_protection_domains, [](device_context& emulated) {
            return new protection_domain(emulated, emulated.allocate_handle());
        });
}

int ibv_dealloc_pd(ibv_pd* pd)
{
    return spead_emu::destroy_in_context<protection_domain>(
        pd,
        &device_context::live_protection_domains,
        [](protection_domain& emulated, device_context&) {
            if (emulated.live_memory_regions || emulated.live_queue_pairs) {
                // The kernel refuses too (the PD's use count is not zero).
                spead_emu::trace(
                    "ibv_dealloc_pd refused: %d MR(s) and %d QP(s) still use it",
                    emulated.live_memory_regions,
                    emulated.live_queue_pairs);
                return EBUSY;
            }
            return 0;
        });
}

} // extern "C"
