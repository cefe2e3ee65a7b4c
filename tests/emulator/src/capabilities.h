/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef SPEAD_EMU_CAPABILITIES_H
#define SPEAD_EMU_CAPABILITIES_H

namespace spead_emu {

// Whether the calling thread has a capability (linux/capability.h number) in its
// effective set. The kernel checks the caller, so the emulator does too.
bool has_effective_capability(int capability);

} // namespace spead_emu

#endif
