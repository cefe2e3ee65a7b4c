/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace spead_emu {
namespace {

void print(const char* format, va_list args)
{
    // One fprintf per line keeps lines from concurrent NIC threads from interleaving.
    char line[1024];
    vsnprintf(line, sizeof(line), format, args);
    fprintf(stderr, "spead-emu: %s\n", line);
}

} // namespace

void warn(const char* format, ...)
{
    va_list args;
    va_start(args, format);
    print(format, args);
    va_end(args);
}

bool tracing_enabled()
{
    static const bool enabled = [] {
        const char* value = getenv("SPEAD_EMU_VERBOSE");
        return value != nullptr && strcmp(value, "0") != 0 && value[0] != '\0';
    }();
    return enabled;
}

void trace(const char* format, ...)
{
    if (!tracing_enabled())
        return;
    va_list args;
    va_start(args, format);
    print(format, args);
    va_end(args);
}

void fail_unemulated(const char* format, ...)
{
    va_list args;
    va_start(args, format);
    char what[768];
    vsnprintf(what, sizeof(what), format, args);
    va_end(args);
    warn("not emulated: %s. The emulated NIC (tests/emulator) models only the raw-packet "
         "verbs a SPEAD transport uses; see docs/testing.md.",
         what);
    abort();
}

} // namespace spead_emu

extern "C" void emulator_abort_unemulated(const char* symbol)
{
    spead_emu::fail_unemulated("%s is not implemented by the stand-in rdma-core library",
                               symbol);
}
