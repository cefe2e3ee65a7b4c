/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_bench: throughput figures for gr-spead.
//
//   spead_bench mem [--packet N] [--heap-size N] [--total-bytes N] [--repeat N]
//                   [--continuous [--threads N]]
//   spead_bench send [--packet N...] [--seconds S] [--runs N] [--dest HOST:PORT]
//   spead_bench recv [--packet N...] [--rates R,...] [--runs N] [--buffer BYTES]
//                    [--continuous --threads N]
//   spead_bench loopback [--packet N...] [--rates R,...] [--max-heap-size N]
//   [--queue-heaps N] [--continuous]
//   spead_bench sink [--packet N...] [--seconds S] [--runs N] [--source
//   null|vector|none]
//   spead_bench rdma [--packet N...] [--seconds S] [--runs N] [--address ADDR]
//   [--sender-netns NAME]
//   Every mode: [--csv FILE] appends its figures as rows for plotting.
//
// mem: cuts heaps into packets in memory, then decodes and assembles them on one
// thread, next to a memcpy ceiling measured in the same run on the same bytes (each
// packet's payload copied to its place in a reused ring of heap-sized buffers).
// send: send::udp_stream alone, as fast as it goes, to a socket on 127.0.0.1 that
// never reads (the kernel drops what does not fit): the transport's cost without blocks,
// and its CPU time per GiB sent.
// recv: recv::stream with a udp_reader on 127.0.0.1, fed by spead_send's generator in
// a child process at a set rate; a consumer thread takes the heaps. The highest rate
// with no heap lost in --runs consecutive runs: the transport's share of the loopback
// figure; and per run the receive side's CPU time (this process) per GiB received.
// recv --continuous --threads N: a continuous stream on N ports read by one thread and
// by N, at the first of --rates: the CPU per GiB of each and their ratio.
// loopback and sink run GNU Radio flowgraphs with the blocks; with --alternate, each
// beside the stream under it (recv, send) in the same invocation, and their ratio.
// rdma: the rdma link (both paths) beside the raw RDMA-write throughput of the same
// wire and message size, in one run: the receiving ends on --address, the sending
// ends in a child process, in --sender-netns's namespace if given (bench_rdma.cc).
//
// This file parses the command line (bench_options) and runs the mode: mem in
// bench_mem.cc (--threads in bench_mem_threads.cc), send and recv in bench_udp.cc
// (recv --continuous in bench_udp_threads.cc),
// loopback and sink in bench_flowgraph.cc, their --alternate in bench_alternate.cc.

#include "bench_modes.h"
#include "command_line.h"
#include <boost/program_options.hpp>
#include <iostream>

namespace po = boost::program_options;
namespace bench = gr::spead::apps::bench;

int main(int argc, char** argv)
{
    bench::bench_options o;
    po::options_description options("spead_bench options");
    o.add_to(options);
    po::options_description hidden;
    o.add_mode_to(hidden);
    po::variables_map vm;
    try {
        vm = gr::spead::apps::parse_command_line(argc, argv, options, hidden, "mode", 1);
    } catch (const po::error& e) {
        std::cerr << "spead_bench: " << e.what() << "\n" << options;
        return 2;
    }
    try {
        if (vm.count("help")) {
            std::cout
                << "usage: spead_bench [mem|send|recv|loopback|sink|rdma] [options]\n"
                << options;
            return 0;
        }
        o.check(vm);
        bench::csv_writer csv;
        if (o.write_csv)
            csv = bench::csv_writer(o.csv);
        if (o.mode == "mem")
            return bench::run_mem(o, csv);
        if (o.mode == "send")
            return bench::run_send(o, csv);
        if (o.mode == "recv" && o.continuous)
            return bench::run_recv_threads(o, csv);
        if (o.mode == "recv")
            return bench::run_recv(o, csv);
        if (o.mode == "loopback" && o.alternate)
            return bench::run_loopback_beside_recv(o, csv);
        if (o.mode == "loopback")
            return bench::run_loopback(o, csv);
        if (o.mode == "rdma")
            return bench::run_rdma(o, csv);
        if (o.alternate)
            return bench::run_sink_beside_send(o, csv);
        return bench::run_sink(o, csv);
    } catch (const std::invalid_argument& e) {
        std::cerr << "spead_bench: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "spead_bench: " << e.what() << "\n";
        return 1;
    }
}
