/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What a process needs to use raw-packet verbs, CAP_NET_RAW and enough locked memory,
// and the fix to give when it lacks them (shared by the setup calls, the readers,
// streams, blocks and spead_ibv_check).

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_PRIVILEGES_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_PRIVILEGES_H

#include <gnuradio/spead/api.h>
#include <sys/resource.h>
#include <cstddef>
#include <string>
#include <utility>

namespace gr {
namespace spead {
namespace ibv {

/*! True when this process has CAP_NET_RAW in its effective set. */
SPEAD_API bool has_cap_net_raw();
/*! The fix for a missing CAP_NET_RAW: commands for apps, GRC and Python flowgraphs. */
SPEAD_API std::string cap_net_raw_fix();
/*! RLIMIT_MEMLOCK (soft, hard) in bytes; RLIM_INFINITY when unlimited. */
SPEAD_API std::pair<rlim_t, rlim_t> memlock_limit();
/*! "8 MiB" / "unlimited" */
SPEAD_API std::string format_limit(rlim_t bytes);
/*! The fix for registering \p needed bytes under the current memlock limit. */
SPEAD_API std::string memlock_fix(std::size_t needed);

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
