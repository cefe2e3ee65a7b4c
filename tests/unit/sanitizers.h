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

#ifdef __has_feature // clang
#define SPEAD_TEST_FEATURE(x) __has_feature(x)
#else // gcc says so with __SANITIZE_*__
#define SPEAD_TEST_FEATURE(x) 0
#endif

#if defined(__SANITIZE_ADDRESS__) || SPEAD_TEST_FEATURE(address_sanitizer)
constexpr bool under_asan = true;
#else
constexpr bool under_asan = false;
#endif
#if defined(__SANITIZE_THREAD__) || SPEAD_TEST_FEATURE(thread_sanitizer)
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif

/*! ASan or TSan: their shadow memory is part of the address space and RSS. */
constexpr bool under_sanitizer = under_asan || under_tsan;

} // namespace spead_test

#endif
