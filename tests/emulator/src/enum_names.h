/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Names of verbs enum values, looked up in a table with a bounds check.
#ifndef SPEAD_EMU_ENUM_NAMES_H
#define SPEAD_EMU_ENUM_NAMES_H

#include <infiniband/verbs.h>

#include <cstddef>

namespace spead_emu {

// names[value - first], or \p unknown for a value outside the table.
template <size_t N>
const char*
enum_name(const char* const (&names)[N], long value, const char* unknown, long first = 0)
{
    const long index = value - first;
    return index >= 0 && static_cast<size_t>(index) < N ? names[index] : unknown;
}

// "RESET", "INIT", "RTR", ...
inline const char* qp_state_name(ibv_qp_state state)
{
    static const char* const names[] = { "RESET", "INIT", "RTR", "RTS",
                                         "SQD",   "SQE",  "ERR" };
    return enum_name(names, state, "UNKNOWN");
}

} // namespace spead_emu

#endif
