/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TEST_PLAN_ERRORS_H
#define INCLUDED_SPEAD_TEST_PLAN_ERRORS_H

// What the tests of the blocks' configs and plans share: options by name as GRC and
// Python give them, the message the config or its plan throws (error_of), whether it
// names the option first (names), and a table of bad values each refused naming its
// option (expect_each_named).

#include "mapping/sink_plan.h"
#include "mapping/source_plan.h"
#include <gnuradio/logger.h>
#include <gtest/gtest.h>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace spead_test {

inline gr::logger_ptr plan_logger()
{
    static auto logger = std::make_shared<gr::logger>("test block params");
    return logger;
}

/*! A block's options by name, as GRC and Python give them (in any order). */
template <typename Config>
struct block_options : std::map<std::string, gr::spead::option_value> {
    using config_type = Config;
    Config config() const { return Config(gr::spead::option_list(begin(), end())); }
};
using source_options = block_options<gr::spead::source_config>;
using sink_options = block_options<gr::spead::sink_config>;

inline gr::spead::source_plan plan_of(const source_options& p)
{
    return gr::spead::plan_source(p.config(), plan_logger());
}

inline gr::spead::sink_plan plan_of(const sink_options& p)
{
    return gr::spead::plan_sink(p.config(), plan_logger());
}

/*! The message of the std::invalid_argument the config or its plan throws for \p p;
 * "(no error)". */
template <typename Options>
std::string error_of(const Options& p)
{
    try {
        plan_of(p);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no error)";
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

/*! Each case, set on \p good, is refused naming its parameter. */
template <typename Params>
void expect_each_named(const Params& good, const std::vector<bad_value<Params>>& cases)
{
    for (const auto& c : cases) {
        Params p = good;
        c.set(p);
        const std::string what = error_of(p);
        EXPECT_TRUE(names(what, c.parameter)) << what;
    }
}

} // namespace spead_test

#endif
