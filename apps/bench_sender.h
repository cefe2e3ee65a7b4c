/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_SENDER_H
#define INCLUDED_SPEAD_APPS_BENCH_SENDER_H

// spead_bench's sender: spead_send's heap generator on a send::udp_stream, in this
// process (send_heaps) or in a child process (forked_sender), so that this process's
// CPU time is a receiver's alone; and the sender's half of a trial's figures.

#include "cpu_usage.h"
#include "heap_generator.h"
#include "rate_search.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/stats.h>
#include <sys/types.h>
#include <type_traits>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

/*! Immediate item carrying a data heap's timestamp in the continuous benchmarks. */
constexpr std::uint64_t bench_timestamp_item = 0x1600;

/*! The sender: spead_send's heaps to one UDP destination. */
struct sender_options {
    std::string destination = "127.0.0.1:7148";
    double rate_gbps = 0.0; //!< 0: as fast as possible
    double seconds = 3.0;   //!< how long to send (sets the heap count when rate > 0)
    std::size_t packet = 8972;
    std::size_t heap_size = 1 << 20;
    std::size_t burst = 65536;
    std::size_t max_heaps = 4;
    std::size_t buffer = 0; //!< socket send buffer, 0 = the default
    /*! Every heap from one buffer (generator_config::one_buffer): the load of a
     * receive benchmark, which leaves the receiver under test the most CPU. */
    bool one_buffer = false;
    /*! With an id (bench_timestamp_item): each data heap is timestamped (see
     * generator_config::timestamp_item) and a stop heap ends the run, for the
     * continuous benchmarks. */
    std::uint64_t timestamp_item = 0;
    /*! Makes the stream instead of a send::udp_stream to \ref destination (spead_bench
     * rdma: a send::rdma_stream, whose packet is a message: set_max_message_size);
     * called in the process that sends. */
    std::function<std::unique_ptr<send::stream>(boost::asio::io_context&,
                                                const send::stream_config&)>
        make_stream;
};

struct sender_report {
    generator_result result;
    send_stats stats;
    double achieved_gbps = 0.0; //!< SPEAD packet bytes over the sending time
    /*! This process's CPU time while the heaps were sent: the sender's own where it
     * runs alone (spead_bench send, or a forked_sender's child). */
    cpu_times cpu;
};

/*! Sends with spead_send's generator; with rate 0 for \p seconds, else the heaps that
 * rate × seconds comes to. No descriptors; a stop heap only with a timestamp_item.
 * \throws on setup errors */
sender_report send_heaps(const sender_options& options);

/*!
 * A sender's report, or why there is none, as plain bytes that cross to another process
 * (a forked_sender's child, spead_bench rdma's sender agent).
 */
struct sender_message {
    std::uint64_t data_heaps = 0;
    std::uint64_t control_heaps = 0;
    std::uint64_t heaps_failed = 0;
    std::uint64_t bytes = 0;
    double seconds = 0.0;
    double achieved_gbps = 0.0;
    send_stats stats;
    cpu_times cpu;
    enum class outcome : std::uint8_t { sent, send_error, setup_error, invalid_argument };
    outcome result = outcome::sent;
    char text[512] = {}; //!< what went wrong, when it did

    /*! send_heaps(\p options), its exception caught into the message. */
    static sender_message of_send(const sender_options& options) noexcept;
    /*! The report. \throws what send_heaps() threw (std::invalid_argument stays one),
     * or std::runtime_error when sending failed */
    sender_report report() const;
};
static_assert(std::is_trivially_copyable_v<sender_message>);

/*! The sender's half of a trial at \p rate_gbps: the rate asked, the rate reached,
 * the heaps and packets sent. */
trial_result trial_sent(double rate_gbps, const sender_report& sent);

/*!
 * send_heaps() in a child process, so that this process's CPU time (getrusage) is the
 * receiver's alone. Forks on construction, while the caller has no other thread (the
 * child runs only the sender, then _exit()s); the child waits for start(), so the
 * receiver can bind and start its threads first.
 */
class forked_sender
{
public:
    /*! \throws std::system_error when the pipes or the fork fail */
    explicit forked_sender(const sender_options& options);
    /*! Ends a child that is still running (its report is not wanted any more). */
    ~forked_sender();
    forked_sender(const forked_sender&) = delete;
    forked_sender& operator=(const forked_sender&) = delete;

    /*! Tells the child to send. */
    void start();
    /*! Waits for the child's report and reaps it.
     * \throws what send_heaps() threw in the child (std::invalid_argument stays one),
     * or std::runtime_error when sending failed or the child ended without a report */
    sender_report wait();

private:
    pid_t d_pid = -1;
    int d_start_fd = -1;  //!< write end: one byte starts the child
    int d_report_fd = -1; //!< read end: the child's report
};

/*!
 * A receive trial's sending: starts \p sender and waits for its report, then lets the
 * receiver finish what is queued (until \p stream's \p settled counter stops moving,
 * up to 3 s). When sending throws, stops the stream and runs \p stop_consumer before
 * the exception leaves.
 */
sender_report send_then_settle(forked_sender& sender,
                               recv::stream& stream,
                               recv_stat settled,
                               const std::function<void()>& stop_consumer);
/*! The same for any sender: \p send starts it and returns its report. */
sender_report send_then_settle(const std::function<sender_report()>& send,
                               recv::stream& stream,
                               recv_stat settled,
                               const std::function<void()>& stop_consumer);

/*! A receive trial's consumer: a thread that pops \p stream's heaps as a block's work()
 * would, without copying, and calls \p take for each complete one, until stop(). */
class heap_consumer
{
public:
    heap_consumer(recv::stream& stream, std::function<void()> take);
    ~heap_consumer() { stop(); }
    heap_consumer(const heap_consumer&) = delete;
    heap_consumer& operator=(const heap_consumer&) = delete;
    /*! Takes what is still queued, then ends the thread (idempotent). */
    void stop();

private:
    std::atomic<bool> d_done{ false };
    std::thread d_thread;
};

/*! A receive trial's whole sending: send_then_settle() with \p send (which starts the
 * sender and returns its report), then stops \p stream and runs
 * \p stop_consumer. \p used gets this process's CPU time until the receiver settled:
 * the receive side's (the reader and consumer threads, and this one waiting). */
sender_report receive_until_settled(const std::function<sender_report()>& send,
                                    recv::stream& stream,
                                    recv_stat settled,
                                    const std::function<void()>& stop_consumer,
                                    cpu_times& used);
/*! The same with \p sender started and waited for. */
sender_report receive_until_settled(forked_sender& sender,
                                    recv::stream& stream,
                                    recv_stat settled,
                                    const std::function<void()>& stop_consumer,
                                    cpu_times& used);

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
