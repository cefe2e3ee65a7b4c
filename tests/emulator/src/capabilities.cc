/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "capabilities.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace spead_emu {

bool has_effective_capability(int capability)
{
    __user_cap_header_struct header{ _LINUX_CAPABILITY_VERSION_3, 0 };
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (syscall(SYS_capget, &header, data) != 0)
        return false;
    const int word = capability / 32;
    const unsigned bit = 1u << (capability % 32);
    return word < _LINUX_CAPABILITY_U32S_3 && (data[word].effective & bit) != 0;
}

} // namespace spead_emu
