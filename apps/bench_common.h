/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_COMMON_H
#define INCLUDED_SPEAD_APPS_BENCH_COMMON_H

// What spead_bench's modes share: the sender (spead_send's heap generator on a
// send::udp_stream, in this process or a child), CPU time per GiB, the search for the
// highest lossless rate, the --csv rows, the receive-buffer sysctl and the figures'
// context (machine load).

#include "heap_generator.h"
#include <gnuradio/spead/stats.h>
#include <initializer_list>
#include <sys/types.h>
#include <boost/program_options/variables_map.hpp>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

/*! CPU time, seconds, split as getrusage() splits it. */
struct cpu_times {
    double user = 0.0;
    double sys = 0.0;

    /*! This process, all its threads (getrusage(RUSAGE_SELF)). */
    static cpu_times of_process();
    cpu_times operator-(const cpu_times& earlier) const
    {
        return { user - earlier.user, sys - earlier.sys };
    }
};

/*! CPU seconds per GiB (2^30 bytes) of heap payload. */
struct cpu_per_gib {
    double user = 0.0;
    double sys = 0.0;
    double total() const { return user + sys; }

    /*! Nothing when no byte was moved. */
    static std::optional<cpu_per_gib> of(const cpu_times& used, std::uint64_t bytes);
};

/*! "0.123 user + 0.456 sys = 0.579 CPU s/GiB" */
std::string describe(const cpu_per_gib& cpu);
/*! The median of each part (user, sys) over \p figures; nothing if there are none. */
std::optional<cpu_per_gib> median_cpu(const std::vector<cpu_per_gib>& figures);

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
    /*! With an id (bench_timestamp_item): each data heap is timestamped (see
     * generator_config::timestamp_item) and a stop heap ends the run, for the
     * continuous benchmarks. */
    std::uint64_t timestamp_item = 0;
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

/*! Immediate item carrying a data heap's timestamp in the continuous benchmarks. */
constexpr std::uint64_t bench_timestamp_item = 0x1600;

/*! One trial of a receiver at one rate. */
struct trial_result {
    double target_gbps = 0.0;
    double achieved_gbps = 0.0;
    std::uint64_t heaps_sent = 0;
    std::uint64_t heaps_received = 0; //!< complete heaps that reached the consumer
    std::uint64_t packets_sent = 0;
    std::uint64_t packets_received = 0;
    /*! Counters that say where the rest went (printed when non-zero). */
    std::vector<std::pair<std::string, std::uint64_t>> drops;
    /*! The receiving process's CPU time from the sender's start until the receiver
     * had drained, over the heap payload of the complete heaps received; nothing
     * where the sender shares the process or no heap arrived. */
    std::optional<cpu_per_gib> receiver_cpu;

    std::uint64_t heaps_lost() const
    {
        return heaps_sent > heaps_received ? heaps_sent - heaps_received : 0;
    }
};

/*!
 * spead_bench --csv: appends tidy rows for plotting,
 * "bench,impl,packet_bytes,offered_gbps,trial,metric,value", with the header only when
 * the file is new or empty. impl is "gr-spead"; offered_gbps is empty for runs as fast
 * as possible; trial is the run number (from 1) or "median". Default-constructed, it
 * writes nothing (no --csv).
 */
class csv_writer
{
public:
    csv_writer() = default;
    /*! \throws std::invalid_argument naming --csv when \p path cannot be written */
    explicit csv_writer(const std::string& path);

    /*! Which run the rows describe. */
    struct run {
        std::string bench; //!< "recv", "mem_continuous", ...
        std::size_t packet_bytes = 0;
        double offered_gbps = 0.0; //!< 0: as fast as possible (written empty)
        std::string trial;         //!< "1", "2", ... or "median"
    };
    /*! \throws std::runtime_error when the file cannot be written any more */
    void row(const run& r, const std::string& metric, double value);
    void row(const run& r, const std::string& metric, std::uint64_t value);
    void row(const run& r, const std::string& metric, std::int64_t value);
    /*! A row per (metric, value). */
    void rows(const run& r,
              std::initializer_list<std::pair<const char*, double>> metrics);
    /*! cpu_user_s_per_gib, cpu_sys_s_per_gib and cpu_s_per_gib, if there is a figure. */
    void cpu_rows(const run& r, const std::optional<cpu_per_gib>& cpu);
    /*! A trial of a receiver: gbps (the sender's), heaps and packets sent, received
     * and lost, loss_fraction (of heaps) and the receiver's CPU per GiB. */
    void trial_rows(const run& r, const trial_result& trial);

private:
    void write(const run& r, const std::string& metric, const std::string& value);

    std::string d_path;
    std::ofstream d_out;
};

/*! Where a search writes its rows: bench \p bench of the --csv file, one packet size. */
struct csv_scope {
    csv_writer& csv;
    std::string bench;
    std::size_t packet_bytes;
};

using trial_function = std::function<trial_result(double rate_gbps)>;

struct search_options {
    std::vector<double> rates; //!< tried in ascending order (Gb/s)
    int runs = 3;              //!< consecutive lossless runs a rate needs
    int refine = 2;            //!< bisection steps between the last pass and first fail
};

/*!
 * Tries the rates in ascending order until one loses heaps, then bisects between the
 * highest lossless rate and that one. A rate passes when \p options.runs consecutive
 * runs lose no heap and the sender reached 95 % of it; a run that falls short without
 * loss ends the search (sender-limited). Prints a line per run and a summary line
 * starting with \p label (with the medians of the passing runs at the highest rate);
 * writes each run's rows, and the medians' (trial "median": lossless_gbps, gbps and
 * the receiver's CPU), to \p rows. \return the highest rate that passed (0 if none)
 */
double search_lossless_rate(const trial_function& trial,
                            const search_options& options,
                            const std::string& label,
                            const csv_scope& rows);

/*! One trial of a packet size at a rate; \p first is true for the first trial of each
 * size (to describe the set-up once). */
using packet_trial =
    std::function<trial_result(std::size_t packet, double rate_gbps, bool first)>;

/*!
 * search_lossless_rate() for every --packet size, with the --rates, --runs and --refine
 * options; prints "<mode> packet N: ..." summaries, then "<mode>_lossless_gbps_N: X" per
 * size; rows go to \p csv as bench \p mode. \return the exit status (0)
 */
int report_lossless_rates(const boost::program_options::variables_map& vm,
                          const std::string& mode,
                          const packet_trial& trial,
                          csv_writer& csv);

/*! One run's line: "10 Gb/s: sent 3576 heaps (...) at 9.98 Gb/s, received 3576 (...),
 * lost 0", then the receiver's CPU per GiB where measured. */
std::string describe(const trial_result& r);

/*! "load average 0.52 0.61 0.70" from /proc/loadavg. */
std::string load_average();

double median(std::vector<double> values);

/*!
 * Lifts net.core.rmem_max to at least \p bytes while it lives (root only), so that a
 * socket made meanwhile gets the receive buffer asked for; restores the old value on
 * destruction, so the rest of the machine keeps its setting. The cap only applies
 * when a socket sets SO_RCVBUF, so a short scope around socket creation is enough.
 */
class rmem_max_raise
{
public:
    explicit rmem_max_raise(std::size_t bytes);
    ~rmem_max_raise();
    rmem_max_raise(const rmem_max_raise&) = delete;
    rmem_max_raise& operator=(const rmem_max_raise&) = delete;

    std::size_t original() const { return d_original; }
    /*! The cap while this object lives. */
    std::size_t effective() const { return d_effective; }

private:
    std::size_t d_original = 0;
    std::size_t d_effective = 0;
    bool d_raised = false;
};

/*! net.core.rmem_max, bytes (0 if unreadable). */
std::size_t read_rmem_max();

/*! "receive buffer: asked 8388608 bytes, net.core.rmem_max 4194304 (raised to
 * 8388608 while the socket was made, as root), granted 8388608" */
std::string describe_receive_buffer(std::size_t asked,
                                    const rmem_max_raise& raise,
                                    std::size_t granted);

/*! A UDP socket on 127.0.0.1 that never reads: the kernel queues what fits and drops
 * the rest, counting it. The cheapest receiver a loopback sender can have. */
class discard_socket
{
public:
    /*! \throws std::system_error */
    discard_socket();
    ~discard_socket();
    discard_socket(const discard_socket&) = delete;
    discard_socket& operator=(const discard_socket&) = delete;

    unsigned short port() const { return d_port; }
    /*! Datagrams the kernel dropped because the buffer was full (SK_MEMINFO_DROPS). */
    std::uint64_t drops() const;

private:
    int d_fd = -1;
    unsigned short d_port = 0;
};

/*! A port on 127.0.0.1 that was free a moment ago. */
unsigned short free_udp_port();

/*! Parses "2,4,8" or "2 4 8" into rates. \throws std::invalid_argument */
std::vector<double> parse_rates(const std::string& text);

/*! spead_bench loopback and sink (bench_flowgraph.cc), given spead_bench's parsed
 * options and the --csv file; each returns the exit status. */
int run_loopback(const boost::program_options::variables_map& vm, csv_writer& csv);
int run_sink(const boost::program_options::variables_map& vm, csv_writer& csv);

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
