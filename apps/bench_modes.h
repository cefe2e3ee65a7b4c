/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_MODES_H
#define INCLUDED_SPEAD_APPS_BENCH_MODES_H

// spead_bench's modes, one file each: given the checked options and the --csv file,
// each runs its measurements, prints them and returns the exit status.

#include "bench_csv.h"
#include "bench_options.h"

namespace gr {
namespace spead {
namespace apps {
namespace bench {

int run_mem(const bench_options& o, csv_writer& csv);          //!< bench_mem.cc
int run_mem_threads(const bench_options& o, csv_writer& csv);  //!< bench_mem_threads.cc
int run_send(const bench_options& o, csv_writer& csv);         //!< bench_udp.cc
int run_recv(const bench_options& o, csv_writer& csv);         //!< bench_udp.cc
int run_recv_threads(const bench_options& o, csv_writer& csv); //!< bench_udp_threads.cc
int run_loopback(const bench_options& o, csv_writer& csv);     //!< bench_flowgraph.cc
int run_sink(const bench_options& o, csv_writer& csv);         //!< bench_flowgraph.cc
int run_rdma(const bench_options& o, csv_writer& csv);         //!< bench_rdma.cc
int run_sink_beside_send(const bench_options& o, csv_writer& csv); //!< bench_alternate.cc
int run_loopback_beside_recv(const bench_options& o,
                             csv_writer& csv); //!< bench_alternate.cc

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
