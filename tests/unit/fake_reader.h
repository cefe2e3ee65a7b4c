/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TEST_FAKE_READER_H
#define INCLUDED_SPEAD_TEST_FAKE_READER_H

#include <gnuradio/spead/recv_stream.h>
#include <condition_variable>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace spead_test {

using namespace gr::spead;

/*! A reader driven by the test: feed() hands packets to the stream from the test's
 * thread; its loop waits until the test says how it ends (finish(), fail()) or the
 * stream stops. */
class fake_reader : public recv::reader
{
public:
    explicit fake_reader(recv::stream& s, recv_stats stats = recv_stats())
        : reader(s), d_stats(stats)
    {
    }
    recv_stats transport_stats() const override { return d_stats; }

    bool feed(const std::vector<std::vector<std::uint8_t>>& packets)
    {
        std::vector<recv::packet_view> views;
        for (const auto& p : packets)
            views.push_back({ p.data(), p.size() });
        return add_packets(views.data(), views.size());
    }
    /*! The stream's wait_for_queue_space(), as a capture replay calls it. */
    std::size_t queue_space(std::chrono::microseconds timeout)
    {
        return wait_for_queue_space(timeout);
    }
    /*! The loop returns: the end of this reader's input. */
    void finish() { end(ending::finished); }
    /*! The loop throws: the transport failed. */
    void fail() { end(ending::failed); }

    std::atomic<bool> started{ false };
    std::atomic<bool> stopped{ false };

protected:
    void run() override
    {
        started = true;
        std::unique_lock<std::mutex> lock(d_mutex);
        while (d_ending == ending::none && !stopping())
            d_cv.wait_for(lock, std::chrono::milliseconds(10));
        if (d_ending == ending::failed)
            throw std::runtime_error("the test broke the transport; fix: none needed");
        stopped = stopping();
    }
    void wake() override { d_cv.notify_all(); }

private:
    enum class ending { none, finished, failed };
    void end(ending e)
    {
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            d_ending = e;
        }
        d_cv.notify_all();
    }

    recv_stats d_stats;
    std::mutex d_mutex;
    std::condition_variable d_cv;
    ending d_ending = ending::none;
};

} // namespace spead_test

#endif
