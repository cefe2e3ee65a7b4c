/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TESTS_ERROR_MESSAGE_H
#define INCLUDED_SPEAD_TESTS_ERROR_MESSAGE_H

#include <gtest/gtest.h>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace spead_test {

/*! The message of the \p Error that \p f throws, or nothing if it throws none. */
template <typename Error, typename F>
std::optional<std::string> thrown_message(F&& f)
{
    try {
        f();
    } catch (const Error& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

/*! The message of the \p Error that \p f throws ("" if it throws none). */
template <typename Error, typename F>
std::string error_message(F&& f)
{
    return thrown_message<Error>(std::forward<F>(f)).value_or("");
}

/*! As error_message(), and a test failure saying "<accepted> was accepted" when \p f
 * throws nothing. */
template <typename Error, typename F>
std::string expect_error(F&& f, const std::string& accepted)
{
    const std::optional<std::string> message = thrown_message<Error>(std::forward<F>(f));
    if (!message)
        ADD_FAILURE() << accepted << " was accepted";
    return message.value_or("");
}

/*! \p f throws an \p Error whose message contains \p part. */
template <typename Error, typename F>
void expect_error_containing(F&& f, const std::string& part, const std::string& accepted)
{
    const std::string message = expect_error<Error>(std::forward<F>(f), accepted);
    EXPECT_NE(message.find(part), std::string::npos) << message;
}

/*! \p f throws std::invalid_argument whose message begins "<parameter>:". */
inline void expect_invalid(const std::function<void()>& f, const std::string& parameter)
{
    const std::string message =
        expect_error<std::invalid_argument>(f, "a bad value of " + parameter);
    EXPECT_EQ(message.rfind(parameter + ":", 0), 0u) << message;
}

} // namespace spead_test

#endif /* INCLUDED_SPEAD_TESTS_ERROR_MESSAGE_H */
