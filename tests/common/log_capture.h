/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TESTS_LOG_CAPTURE_H
#define INCLUDED_SPEAD_TESTS_LOG_CAPTURE_H

#include <gnuradio/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <memory>
#include <mutex>
#include <string>

namespace spead_test {

/*! Collects what GNU Radio's loggers print, for tests that expect a log line. */
class capture_sink : public spdlog::sinks::base_sink<std::mutex>
{
public:
    /*! The sink, attached to GNU Radio's default logging backend on first use. */
    static std::shared_ptr<capture_sink> instance()
    {
        static const std::shared_ptr<capture_sink> sink = [] {
            auto s = std::make_shared<capture_sink>();
            gr::logging::singleton().add_default_sink(s);
            return s;
        }();
        return sink;
    }
    std::string text()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return d_text;
    }

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override
    {
        d_text.append(msg.payload.data(), msg.payload.size());
        d_text += '\n';
    }
    void flush_() override {}

private:
    std::string d_text;
};

} // namespace spead_test

#endif
