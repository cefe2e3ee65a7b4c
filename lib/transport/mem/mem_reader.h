/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_MEM_READER_H
#define INCLUDED_SPEAD_TRANSPORT_MEM_READER_H

// recv::mem_reader: packets from memory, for the benchmarks (spead_bench mem) and the
// tests, as spead2's recv::mem_reader reads them from a buffer.

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_stream.h>
#include <condition_variable>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*! How a mem_reader hands its packets over. */
class mem_reader;

struct SPEAD_API mem_reader_config {
    /*! Packets per add_packets() call at most (udp_reader's recvmmsg batch). */
    std::size_t batch = 64;
    /*! Never more packets than the stream's queue has room for (see
     * reader::wait_for_queue_space()): a slow consumer slows the reader down instead of
     * losing heaps, as a capture replay. False: as fast as the stream takes them. */
    bool wait_for_queue_space = true;
    /*! After the last packet: true, run() returns (end of input, the stream ends once
     * every reader has); false, it waits for close(), fail() or the stream to stop, so
     * that a test can push() more from its own thread. */
    bool end_after_packets = true;
    /*! With \ref before_step: the packets are handed over in steps of this many (a heap,
     * or a position of several substreams). 0: one step. */
    std::size_t packets_per_step = 0;
    /*! Called on the reader's thread with the number of steps done, before each step
     * and once after the last (with the step count); false ends run() at once. It may
     * wait (until the reader's stopping(), at least): a benchmark paces its readers
     * with it. Called per step, never per packet. */
    std::function<bool(std::size_t steps_done, const mem_reader& reader)> before_step;
    /*! What transport_stats() reports. */
    recv_stats transport_stats;
};

/*!
 * \brief A reader of packets already in memory: each a packet_view into memory the
 * caller keeps alive until the reader has ended.
 *
 * run() hands the packets to the stream in batches on the reader's thread; push()
 * hands more from any thread. close() and fail() end a reader that waits after its
 * packets (end_after_packets false): as at the end of a capture file, or as a
 * transport that broke.
 */
class SPEAD_API mem_reader : public reader
{
public:
    mem_reader(stream& owner,
               std::vector<packet_view> packets,
               mem_reader_config config = mem_reader_config());
    ~mem_reader() override;

    recv_stats transport_stats() const override { return d_config.transport_stats; }

    /*! Hands \p n packets to the stream from the calling thread, at once. \return false
     * once the stream has ended */
    bool push(const packet_view* packets, std::size_t n)
    {
        return add_packets(packets, n);
    }
    /*! The end of input: run() returns once its packets are handed over. */
    void close();
    /*! The transport broke: run() throws \p what (which names the cause and the fix). */
    void fail(const std::string& what);

    /*! The stream is stopping: run() returns (for a before_step that waits). */
    using reader::stopping;
    /*! run() has begun, on the reader's thread. */
    bool has_started() const { return d_started.load(); }
    /*! run() returned because the stream was stopping (not at the end of input). */
    bool was_stopped() const { return d_stopped.load(); }

protected:
    void run() override;
    void wake() override;

    std::atomic<bool> d_started{ false };
    std::atomic<bool> d_stopped{ false };

private:
    /*! Hands packets [first, last) over; false when run() should return. */
    bool hand_over(std::size_t first, std::size_t last);
    /*! Waits for close(), fail() or the stream stopping (end_after_packets false). */
    void wait_for_end();

    std::vector<packet_view> d_packets;
    mem_reader_config d_config;
    std::mutex d_mutex;
    std::condition_variable d_cv;
    bool d_closed = false;
    std::string d_failure; //!< fail()'s message; empty while the transport works
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif
