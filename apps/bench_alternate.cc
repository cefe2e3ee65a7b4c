/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_bench sink --alternate and loopback --alternate: the block beside the stream
// under it, alternated in one invocation so that both figures of a pair are taken under
// the same load, and their ratio printed (the figure of issue 37: the blocks as fast as
// the streams under them).

#include "bench_modes.h"
#include "bench_trials.h"
#include "mapping/sink_plan.h" // sink_send_slots
#include "rate_search.h"
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {
/*! "a, b, c" */
std::string listed(const std::vector<double>& values)
{
    std::string out;
    for (double v : values)
        out += (out.empty() ? "" : ", ") + std::to_string(v).substr(0, 5);
    return out;
}
} // namespace

int run_sink_beside_send(const bench_options& o, csv_writer& csv)
{
    // The send run keeps as many heaps in flight as the sink's stream does: with
    // spead_bench send's 4 it would send from half the memory, and on a core with 4 MiB
    // of L2 that alone made it 13 % faster at 8972 B (docs/performance.md).
    std::cout << "sink --alternate: per round, send::udp_stream alone (as spead_bench "
                 "send, with "
              << sink_send_slots
              << " heaps in flight as spead.sink's stream), then each --source -> "
                 "spead.sink (as spead_bench sink), the same packet size, "
              << o.heap_size << "-byte heaps, " << o.seconds << " s each; "
              << load_average() << "\n";
    // (name, ratio), e.g. sink_vs_send_8972, sink_vs_send_null_source_8972
    std::vector<std::pair<std::string, double>> figures;
    for (std::size_t packet : o.packets) {
        std::vector<std::vector<double>> ratios(o.sources.size());
        for (int round = 1; round <= o.runs; round++) {
            const double send = send_run(o, packet, round, csv, sink_send_slots).gbps;
            for (std::size_t i = 0; i < o.sources.size(); i++) {
                const std::string& source = o.sources[i];
                const sink_figures sink = sink_run(o, source, packet, round, csv);
                const double ratio = send > 0 ? sink.gbps / send : 0.0;
                csv.row({ bench_options::sink_figure("sink_vs_send", source),
                          packet,
                          0.0,
                          std::to_string(round) },
                        "ratio",
                        ratio);
                ratios[i].push_back(ratio);
                std::cout << "  packet " << packet << " round " << round << "/" << o.runs
                          << ", source " << source << ": sink " << sink.gbps
                          << " Gb/s, send " << send << " Gb/s: sink / send " << ratio
                          << std::endl;
            }
        }
        for (std::size_t i = 0; i < o.sources.size(); i++) {
            const std::string bench =
                bench_options::sink_figure("sink_vs_send", o.sources[i]);
            const double m = median(ratios[i]);
            csv.row({ bench, packet, 0.0, "median" }, "ratio", m);
            std::cout << "sink / send packet " << packet << ", source " << o.sources[i]
                      << ": " << m << " (median of " << ratios[i].size()
                      << " rounds: " << listed(ratios[i]) << "); " << load_average()
                      << std::endl;
            figures.emplace_back(bench + "_" + std::to_string(packet), m);
        }
    }
    for (const auto& [name, ratio] : figures)
        std::cout << name << ": " << ratio << "\n";
    return 0;
}

int run_loopback_beside_recv(const bench_options& o, csv_writer& csv)
{
    std::cout << "loopback --alternate: per packet size, " << o.pairs
              << " pair(s) of searches: the highest lossless rate of recv::stream + "
                 "udp_reader (as spead_bench recv), then of spead.source -> "
                 "blocks.null_sink (as spead_bench loopback), the same heaps from a "
                 "child process; "
              << load_average() << "\n";
    using namespace std::placeholders;
    const auto recv = std::bind(recv_trial, std::cref(o), _1, _2, _3);
    const auto loopback = std::bind(loopback_trial, std::cref(o), _1, _2, _3);
    csv_writer later_pairs; // writes nothing: the tables keep the first pair's searches
    std::vector<std::pair<std::size_t, double>> figures;
    for (std::size_t packet : o.packets) {
        std::vector<double> ratios;
        for (int pair = 1; pair <= o.pairs; pair++) {
            csv_writer& rows = pair == 1 ? csv : later_pairs;
            const search_result r = search_packet(recv, packet, o.search, "recv", rows);
            const search_result l =
                search_packet(loopback, packet, o.search, "loopback", rows);
            const double ratio =
                r.lossless_gbps > 0 ? l.lossless_gbps / r.lossless_gbps : 0.0;
            csv.row({ "loopback_vs_recv", packet, 0.0, std::to_string(pair) },
                    "ratio",
                    ratio);
            ratios.push_back(ratio);
            std::cout << "loopback / recv packet " << packet << " pair " << pair << "/"
                      << o.pairs << ": " << ratio << " (loopback " << describe(l)
                      << "; recv " << describe(r) << "); " << load_average() << std::endl;
        }
        const double m = median(ratios);
        csv.row({ "loopback_vs_recv", packet, 0.0, "median" }, "ratio", m);
        std::cout << "loopback / recv packet " << packet << ": " << m << " (median of "
                  << ratios.size() << " pairs: " << listed(ratios) << ")" << std::endl;
        figures.emplace_back(packet, m);
    }
    for (const auto& [packet, ratio] : figures)
        std::cout << "loopback_vs_recv_" << packet << ": " << ratio << "\n";
    return 0;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
