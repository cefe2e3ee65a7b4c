/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef SPEAD_EMU_PROTECTION_DOMAIN_H
#define SPEAD_EMU_PROTECTION_DOMAIN_H

#include "object_shell.h"

#include <infiniband/verbs.h>

namespace spead_emu {

class device_context;

class protection_domain
{
public:
    protection_domain(device_context& context, uint32_t handle);
    static protection_domain* from(ibv_pd* pd);
    ibv_pd* verbs() { return &m_shell.verbs; }
    device_context& context() { return m_context; }
    // Stamps an object made on this PD (QP, WQ) with its context, the PD and a handle.
    void adopt(ibv_context*& context, ibv_pd*& pd, uint32_t& handle);

    // Objects that keep the PD alive (ibv_dealloc_pd refuses with EBUSY while any
    // remain). Guarded by the context's control mutex.
    int live_memory_regions = 0;
    int live_queue_pairs = 0;

private:
    object_shell<ibv_pd, protection_domain> m_shell{ this };
    device_context& m_context;
};

} // namespace spead_emu

#endif
