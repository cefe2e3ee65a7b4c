/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_TRIALS_H
#define INCLUDED_SPEAD_APPS_BENCH_TRIALS_H

// One run of a stream and of the block over it, for the modes that report each and for
// --alternate, which puts the two side by side in one invocation (bench_alternate.cc).

#include "bench_csv.h"
#include "bench_options.h"
#include "cpu_usage.h"
#include "rate_search.h"
#include <cstddef>
#include <cstdint>
#include <optional>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

/*! What one send run measured: Gb/s, and CPU per GiB where the kernel gave it. */
struct send_figures {
    double gbps = 0.0;
    std::optional<cpu_per_gib> cpu;
};
/*! One run of send::udp_stream alone into a discard socket (or --dest), printed and
 * written to \p csv as run \p run of bench "send" (bench_udp.cc), with \p max_heaps
 * heaps in flight (0: the sender's default, 4, spead2_send's and spead_send's). */
send_figures send_run(const bench_options& o,
                      std::size_t packet,
                      int run,
                      csv_writer& csv,
                      std::size_t max_heaps = 0);

/*! What one sink run measured. */
struct sink_figures {
    double gbps = 0.0; //!< SPEAD packet bytes over the measured seconds
    std::uint64_t packets = 0;
};
/*! One run of \p source (one of --source) -> spead.sink into a discard socket,
 * printed and written to \p csv as run \p run of bench
 * bench_options::sink_figure("sink", source) (bench_flowgraph.cc). */
sink_figures sink_run(const bench_options& o,
                      const std::string& source,
                      std::size_t packet,
                      int run,
                      csv_writer& csv);

/*! One run of recv::stream + udp_reader at \p rate_gbps, fed by a child process. */
trial_result
recv_trial(const bench_options& o, std::size_t packet, double rate_gbps, bool announce);
/*! The same heaps into spead.source -> blocks.null_sink (bench_flowgraph.cc). */
trial_result loopback_trial(const bench_options& o,
                            std::size_t packet,
                            double rate_gbps,
                            bool announce);

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_APPS_BENCH_TRIALS_H */
