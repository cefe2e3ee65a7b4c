/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TEST_FAKE_READER_H
#define INCLUDED_SPEAD_TEST_FAKE_READER_H

#include "transport/mem/mem_reader.h"
#include <gnuradio/spead/recv_stream.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

namespace spead_test {

using namespace gr::spead;

/*! A reader driven by the test: recv::mem_reader with no packets of its own that waits
 * after them, so feed() hands packets to the stream from the test's thread until the
 * test says how the input ends (finish(), fail()) or the stream stops. */
class fake_reader : public recv::mem_reader
{
public:
    explicit fake_reader(recv::stream& s, recv_stats stats = recv_stats())
        : mem_reader(s, {}, held_open(stats))
    {
    }

    bool feed(const std::vector<std::vector<std::uint8_t>>& packets)
    {
        std::vector<recv::packet_view> views;
        for (const auto& p : packets)
            views.push_back({ p.data(), p.size() });
        return push(views.data(), views.size());
    }
    /*! The stream's wait_for_queue_space(), as a capture replay calls it. */
    std::size_t queue_space(std::chrono::microseconds timeout)
    {
        return wait_for_queue_space(timeout);
    }
    /*! The loop returns: the end of this reader's input. */
    void finish() { close(); }
    /*! The loop throws: the transport failed. */
    void fail() { mem_reader::fail("the test broke the transport; fix: none needed"); }

    const std::atomic<bool>& started = d_started; //!< its loop has begun
    const std::atomic<bool>& stopped =
        d_stopped; //!< its loop ended as the stream stopped

private:
    static recv::mem_reader_config held_open(const recv_stats& stats)
    {
        recv::mem_reader_config c;
        c.end_after_packets = false;
        c.transport_stats = stats;
        return c;
    }
};

} // namespace spead_test

#endif
