/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TEST_PLAN_ERRORS_H
#define INCLUDED_SPEAD_TEST_PLAN_ERRORS_H

// What the tests of plan_source and plan_sink share: the message a plan throws
// (error_of), whether it names the block parameter first (names), and a table of bad
// values each refused naming its parameter (expect_each_named).

#include "mapping/sink_params.h"
#include "mapping/source_params.h"
#include <gnuradio/logger.h>
#include <gtest/gtest.h>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace spead_test {

inline gr::logger_ptr plan_logger()
{
    static auto logger = std::make_shared<gr::logger>("test block params");
    return logger;
}

/*! The message of the std::invalid_argument \p plan throws for \p p; "(no error)". */
template <typename Plan, typename Params>
std::string plan_error(Plan&& plan, const Params& p)
{
    try {
        plan(p, plan_logger());
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no error)";
}

inline std::string error_of(const gr::spead::source_params& p)
{
    return plan_error(gr::spead::plan_source, p);
}

inline std::string error_of(const gr::spead::sink_params& p)
{
    return plan_error(gr::spead::plan_sink, p);
}

/*! \p what starts with "parameter:". */
inline bool names(const std::string& what, const std::string& parameter)
{
    return what.rfind(parameter + ":", 0) == 0;
}

/*! A bad value: how to set it on good parameters, and the parameter it is refused for. */
template <typename Params>
struct bad_value {
    std::function<void(Params&)> set;
    std::string parameter;
};

/*! Each case, set on \p good, is refused by \p plan naming its parameter. */
template <typename Plan, typename Params>
void expect_each_named(Plan&& plan,
                       const Params& good,
                       const std::vector<bad_value<Params>>& cases)
{
    for (const auto& c : cases) {
        Params p = good;
        c.set(p);
        const std::string what = plan_error(plan, p);
        EXPECT_TRUE(names(what, c.parameter)) << what;
    }
}

} // namespace spead_test

#endif
