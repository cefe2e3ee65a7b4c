/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Whether this build runs under a sanitizer: tests that judge memory (RSS, the
// address space) leave that judgment out there.

#ifndef INCLUDED_SPEAD_TESTS_SANITIZERS_H
#define INCLUDED_SPEAD_TESTS_SANITIZERS_H

namespace spead_test {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool under_asan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool under_asan = true;
#else
constexpr bool under_asan = false;
#endif
#else
constexpr bool under_asan = false;
#endif

#if defined(__SANITIZE_THREAD__)
constexpr bool under_tsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif
#else
constexpr bool under_tsan = false;
#endif

/*! ASan or TSan: their shadow memory is part of the address space and RSS. */
constexpr bool under_sanitizer = under_asan || under_tsan;

} // namespace spead_test

#endif
