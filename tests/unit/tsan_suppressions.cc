/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// ThreadSanitizer builds (.ci/sanitize): reports from libraries that are not ours and
// not instrumented. GNU Radio's runtime starts Thrift (ControlPort) threads at load;
// their monitor is torn down at exit in a way TSan cannot follow without Thrift's
// own instrumentation. Nothing of gr-spead is suppressed.

#if defined(__SANITIZE_THREAD__)
extern "C" __attribute__((visibility("default"))) const char*
__tsan_default_suppressions()
{
    return "race:libthrift\n"
           "race:apache::thrift::\n";
}
#endif
