/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TESTS_TEMP_FILE_H
#define INCLUDED_SPEAD_TESTS_TEMP_FILE_H

#include <gtest/gtest.h>
#include <unistd.h>
#include <cstdio>
#include <string>

namespace spead_test {

/*! A file name in the test temp dir, unique to this process, removed when the test
 * ends. It stands wherever a path string is taken. */
struct temp_file {
    explicit temp_file(const std::string& name)
        : path(::testing::TempDir() + "gr_spead_" + std::to_string(getpid()) + "_" + name)
    {
    }
    ~temp_file() { std::remove(path.c_str()); }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;
    operator const std::string&() const { return path; }

    const std::string path;
};

} // namespace spead_test

#endif /* INCLUDED_SPEAD_TESTS_TEMP_FILE_H */
