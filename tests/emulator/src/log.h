/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Diagnostics of the emulated NIC. Everything goes to stderr prefixed "spead-emu:" so a
// test log shows at once which lines come from the test NIC rather than the product.
#ifndef SPEAD_EMU_LOG_H
#define SPEAD_EMU_LOG_H

namespace spead_emu {

// Something an application got wrong, or that hardware would do silently and a test
// author wants to see (frames dropped, CQ overrun, a destroy that would hang).
void warn(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Object lifecycle and per-frame tracing, only with SPEAD_EMU_VERBOSE=1.
void trace(const char* format, ...) __attribute__((format(printf, 1, 2)));
bool tracing_enabled();

// A feature the emulator does not model: abort naming it, so a test never passes by
// accident on behaviour nobody emulated.
[[noreturn]] void fail_unemulated(const char* format, ...)
    __attribute__((format(printf, 1, 2)));

} // namespace spead_emu

// Called by the generated stubs of every rdma-core export the emulator does not
// implement.
extern "C" [[noreturn]] void emulator_abort_unemulated(const char* symbol);

#endif
