/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_RATE_SEARCH_H
#define INCLUDED_SPEAD_APPS_RATE_SEARCH_H

// spead_bench recv and loopback: the search for the highest rate a receiver takes
// without losing a heap, what it prints and the --csv rows it writes.

#include "bench_csv.h"
#include "cpu_usage.h"
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

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

/*! One run's line: "10 Gb/s: sent 3576 heaps (...) at 9.98 Gb/s, received 3576 (...),
 * lost 0", then the receiver's CPU per GiB where measured. */
std::string describe(const trial_result& r);

/*! A trial's rows: gbps (the sender's), heaps and packets sent, received and lost,
 * loss_fraction (of heaps) and the receiver's CPU per GiB. */
void write_trial_rows(csv_writer& csv,
                      const csv_writer::run& r,
                      const trial_result& trial);

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

/*! What a search showed about a receiver. */
struct search_result {
    /*! The highest rate shown lossless: a rate that passed, or, when the search ended
     * on a sender that fell short without loss, the rate that sender reached if it is
     * higher. 0: heaps were lost at every rate tried. */
    double lossless_gbps = 0.0;
    /*! The search ended because the sender (sharing the CPUs) could not reach a rate:
     * lossless_gbps is a lower bound, the receiver's limit was not found. */
    bool sender_limited = false;
    /*! The lowest rate known to lose heaps; 0: none was seen. */
    double loss_gbps = 0.0;
};

/*! "1.89 Gb/s", or ">= 1.89 Gb/s (sender-limited)" for a lower bound. */
std::string describe(const search_result& r);

/*!
 * Tries the rates in ascending order until one loses heaps, then bisects between the
 * highest lossless rate and that one. A rate passes when \p options.runs consecutive
 * runs lose no heap and the sender reached 95 % of it; a run that falls short without
 * loss ends the search (sender-limited: the receiver was lossless at what the sender
 * reached). Prints a line per run and a summary line starting with \p label (with the
 * medians of the lossless runs the figure comes from); writes each run's rows, and the
 * medians' (trial "median": lossless_gbps, sender_limited 0 or 1, gbps and the
 * receiver's CPU), to \p rows.
 */
search_result search_lossless_rate(const trial_function& trial,
                                   const search_options& options,
                                   const std::string& label,
                                   const csv_scope& rows);

/*! The figure lines of a search: "<name>_lossless_gbps_<packet>: X" and
 * "<name>_lossless_sender_limited_<packet>: 0|1". */
std::string
figure_lines(const std::string& name, std::size_t packet, const search_result& r);

/*! One trial of a packet size at a rate; \p first is true for the first trial of each
 * size (to describe the set-up once). */
using packet_trial =
    std::function<trial_result(std::size_t packet, double rate_gbps, bool first)>;

/*! search_lossless_rate() of \p trial at one packet size, labelled "<mode> packet N"
 * (an underscore in \p mode printed as a space), rows to \p csv as bench \p mode. */
search_result search_packet(const packet_trial& trial,
                            std::size_t packet,
                            const search_options& search,
                            const std::string& mode,
                            csv_writer& csv);

/*!
 * search_packet() for every packet size; prints "<mode> packet N: ..."
 * summaries, then the figure lines per size; rows go to \p csv as bench \p mode.
 * \return the exit status (0)
 */
int report_lossless_rates(const search_options& search,
                          const std::vector<std::size_t>& packets,
                          const std::string& mode,
                          const packet_trial& trial,
                          csv_writer& csv);

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
