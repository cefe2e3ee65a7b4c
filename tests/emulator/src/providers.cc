/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Provider libraries (libmlx5, libefa, ...) register themselves with libibverbs from
// their ELF constructors, so merely loading one calls verbs_register_driver_34. The
// real libibverbs keeps the registration to match kernel devices to drivers later; the
// emulator has no kernel devices, so a registration is accepted and changes nothing:
// the emulated devices stay the only devices, and their ops are the emulator's.
#include "log.h"

#include <mutex>
#include <set>
#include <string>

namespace {

// The first member of rdma-core's struct verbs_device_ops (infiniband/driver.h, not
// installed by libibverbs-dev) is the provider's name; nothing else is read.
struct provider_ops_prefix {
    const char* name;
};

} // namespace

extern "C" {

void verbs_register_driver_34(const provider_ops_prefix* ops)
{
    static std::mutex mutex;
    static std::set<std::string> seen;
    const char* name = ops != nullptr && ops->name != nullptr ? ops->name : "(unnamed)";
    std::lock_guard<std::mutex> lock(mutex);
    if (seen.insert(name).second)
        spead_emu::trace("provider %s registered; ignored (the emulated devices do not "
                         "belong to any provider library)",
                         name);
}

} // extern "C"
