/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "privileges.h"
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gr {
namespace spead {
namespace ibv {

bool has_cap_net_raw()
{
    __user_cap_header_struct header{};
    header.version = _LINUX_CAPABILITY_VERSION_3;
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (syscall(SYS_capget, &header, data) != 0)
        return false;
    return data[CAP_NET_RAW / 32].effective & (1u << (CAP_NET_RAW % 32));
}

std::string cap_net_raw_fix()
{
    return "Give the capability to the program that runs, never to Python and never by "
           "running as root: for the tools, `sudo setcap cap_net_raw+ep "
           "/usr/local/bin/spead_recv`; for GRC or a Python flowgraph, start it with the "
           "capability, e.g. `sudo setpriv --reuid=$(id -u) --regid=$(id -g) "
           "--init-groups "
           "--inh-caps=+net_raw --ambient-caps=+net_raw -- env HOME=$HOME "
           "gnuradio-companion` (or a "
           "systemd "
           "unit with AmbientCapabilities=CAP_NET_RAW). See docs/ibverbs.md";
}

std::pair<rlim_t, rlim_t> memlock_limit()
{
    rlimit limit{};
    if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0)
        return { 0, 0 };
    return { limit.rlim_cur, limit.rlim_max };
}

std::string format_limit(rlim_t bytes)
{
    if (bytes == RLIM_INFINITY)
        return "unlimited";
    if (bytes >= (rlim_t(1) << 20) && bytes % (rlim_t(1) << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0)
        return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

std::string memlock_fix(std::size_t needed)
{
    const auto [soft, hard] = memlock_limit();
    return "The NIC must pin " + format_limit(needed) +
           " of memory but RLIMIT_MEMLOCK is " + format_limit(soft) + " (hard limit " +
           format_limit(hard) +
           "). Raise it: `ulimit -l unlimited` in the shell that starts the program, "
           "`memlock unlimited` for the user in /etc/security/limits.conf, or "
           "LimitMEMLOCK=infinity in a systemd unit; or reduce buffer_size";
}

} // namespace ibv
} // namespace spead
} // namespace gr
