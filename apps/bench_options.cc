/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_options.h"
#include "mapping/sink_plan.h" // sink_send_slots
#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/recv_udp.h>
#include <arpa/inet.h>
#include <boost/program_options.hpp>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace po = boost::program_options;

namespace gr {
namespace spead {
namespace apps {
namespace bench {

void bench_options::add_to(po::options_description& options)
{
    buffer = recv::udp_config::default_buffer_size;
    // clang-format off
    options.add_options()
        ("help,h", "show this help")
        ("packet", po::value(&packets)->multitoken()
             ->default_value({ 8972, 1472 }, "8972 1472"), "packet sizes (bytes; rdma: max_packet_size, the largest message)")
        ("heap-size", po::value(&heap_size)->default_value(1 << 20), "heap payload (bytes)")
        ("total-bytes", po::value(&total_bytes)->default_value(std::uint64_t(1) << 30),
             "mem: bytes of heaps built in memory")
        ("repeat", po::value(&repeat)->default_value(11), "mem: runs per packet size (the median is reported)")
        ("round", po::value(&round)->default_value(0), "mem: this invocation is round N (from 1) of a pairing with docs/performance/spead2-mem-decode.cpp, as regenerate alternates the two: trials are numbered from (N - 1) x --repeat + 1, and the round's medians are written as bench mem_pair, trial N, instead of median rows (0: no pairing)")
        ("threads", po::value(&threads)->default_value(1), "mem --continuous: for n = 2 up to this, n reader threads placing into one recv::stream, one substream each, timed beside one thread placing them all and beside memcpy on 1 and n threads (the share of memcpy's gain); recv --continuous: N ports read by 1 udp_reader thread and by N, CPU per GiB of each")
        ("continuous", po::bool_switch(&continuous), "mem: timestamped heaps placed by chunk_assembler into a window of positions (continuous mode) instead of assembled; loopback: also the source in continuous mode, fed timestamped heaps, beside heaps mode; recv: the --threads comparison (CPU per GiB at the first of --rates)")
        ("alternate", po::bool_switch(&alternate), ("sink: each run beside a send run (spead_bench send's, but with as many heaps in flight as the sink's stream, " + std::to_string(sink_send_slots) + ") of the same packet size, alternated, and the ratio sink / send per round and its median (--runs rounds); loopback: each packet size's lossless search beside recv's, and the ratio of their rates").c_str())
        ("seconds", po::value(&seconds)->default_value(3.0), "send, recv, loopback, sink, rdma: seconds per run")
        ("pairs", po::value(&pairs)->default_value(1), "loopback --alternate: how many times recv's search and then the source's run in turn per packet size; the ratio is the median of the pairs' (a single search moves with a stall of a few ms on a busy machine). The recv and loopback tables keep the first pair's searches")
        ("runs", po::value(&runs)->default_value(3), "send, sink, rdma: runs per packet size; recv, loopback: consecutive lossless runs a rate needs")
        ("rates", po::value(&rates_text)->default_value(rates_text), "recv, loopback: rates to try, Gb/s, ascending until heaps are lost (one rate with --refine 0: that rate alone)")
        ("refine", po::value(&search.refine)->default_value(2), "recv, loopback: bisection steps between the last lossless and the first lossy rate")
        ("buffer", po::value(&buffer)->default_value(recv::udp_config::default_buffer_size), "recv, loopback: socket receive buffer (bytes; as root the bench lifts net.core.rmem_max for it)")
        ("burst", po::value(&burst)->default_value(65536), "send, recv, loopback: sender burst (bytes)")
        ("max-heap-size", po::value(&max_heap_size)->default_value(2 << 20), "loopback: the source's max_heap_size (its output buffer holds two)")
        ("queue-heaps", po::value(&queue_heaps)->default_value(0), "loopback: the source's queue_heaps (0: its default)")
        ("source", po::value(&sources)->multitoken()->default_value({ "none" }, "none"), "sink: what feeds the sink, one or more, each in turn (with --alternate, each beside the same send run): none (a source that writes nothing: the sink's own cost, as the send stream writes nothing either), null (blocks.null_source, which writes every item: figures named *_null_source) or vector (blocks.vector_source, repeating: *_vector_source)")
        ("dest", po::value(&dest), "send: destination HOST:PORT (default: a discard socket on 127.0.0.1)")
        ("address", po::value(&address)->default_value(address), "rdma: IPv4 address of the verbs device the receiving ends listen on (the emulator's emu_lo: 127.0.0.1); --packet is max_packet_size there (default 1 MiB + 4 KiB, rdma's)")
        ("sender-netns", po::value(&sender_netns), "rdma: run the sending ends (the raw writer and the SPEAD sender) in network namespace NAME (/run/netns/NAME, as `ip netns add` makes; or a path such as /proc/PID/ns/net), connecting to --address from there; needs root. Default: this namespace")
        ("csv", po::value(&csv), "every mode: append the figures to FILE as rows bench,impl,packet_bytes,offered_gbps,trial,metric,value (header only in a new or empty file)");
    // clang-format on
}

void bench_options::add_mode_to(po::options_description& hidden)
{
    hidden.add_options()("mode", po::value(&mode)->default_value("mem"), "mode");
}

void bench_options::check(const po::variables_map& vm)
{
    if (mode != "mem" && mode != "send" && mode != "recv" && mode != "loopback" &&
        mode != "sink" && mode != "rdma")
        throw std::invalid_argument("unknown mode '" + mode +
                                    "'; use mem, send, recv, loopback, sink or rdma");
    if (mode == "rdma" && vm["packet"].defaulted())
        packets = { recv::rdma_config::default_max_packet_size }; // RC: no MTU packets
    in_addr ipv4{};
    if (mode == "rdma" && inet_pton(AF_INET, address.c_str(), &ipv4) != 1)
        throw std::invalid_argument("--address: '" + address +
                                    "' is not an IPv4 address; give the address of a "
                                    "verbs device's interface (127.0.0.1 on the "
                                    "emulator's emu_lo)");
    if (mode != "rdma" && vm.count("sender-netns"))
        throw std::invalid_argument("--sender-netns: only spead_bench rdma has sending "
                                    "ends in another namespace; drop it or use rdma");
    write_csv = vm.count("csv") > 0;
    search.runs = runs;
    if (mode == "recv" || mode == "loopback")
        search.rates = parse_rates(rates_text);
    if (mode == "mem") {
        if (threads == 0)
            throw std::invalid_argument("--threads: 0; use 1 or more reader threads");
        if (threads > 1 && !continuous)
            throw std::invalid_argument("--threads " + std::to_string(threads) +
                                        ": mem times several threads in continuous mode "
                                        "only; add --continuous");
    }
    if (round < 0)
        throw std::invalid_argument(
            "--round: " + std::to_string(round) +
            "; give the round of the pairing from 1, or 0 for none");
    if (round > 0 && (mode != "mem" || continuous))
        throw std::invalid_argument("--round: only spead_bench mem (heaps) has a "
                                    "counterpart in spead2 (spead2-mem-decode) to pair "
                                    "with; drop --round" +
                                    std::string(mode == "mem" ? " or --continuous" : ""));
    if (mode == "recv" && continuous && threads < 2)
        throw std::invalid_argument("--threads " + std::to_string(threads) +
                                    ": recv --continuous compares one reader thread "
                                    "with --threads N on N ports; give 2 or more");
    if (mode == "recv" && threads > 1 && !continuous)
        throw std::invalid_argument("--threads " + std::to_string(threads) +
                                    ": recv times several threads in continuous mode "
                                    "only; add --continuous");
    if (alternate && mode != "sink" && mode != "loopback")
        throw std::invalid_argument("--alternate: spead_bench " + mode +
                                    " has no block to put beside its stream; use it with "
                                    "sink or loopback");
    if (pairs < 1)
        throw std::invalid_argument("--pairs: " + std::to_string(pairs) +
                                    "; give 1 or more searches of each side");
    if (pairs > 1 && !(alternate && mode == "loopback"))
        throw std::invalid_argument("--pairs: only loopback --alternate searches in "
                                    "pairs; add --alternate or drop --pairs");
    if (alternate && continuous)
        throw std::invalid_argument("--alternate: loopback --continuous already compares "
                                    "two modes; give one of them");
    for (auto s = sources.begin(); s != sources.end(); ++s) {
        if (*s != "null" && *s != "vector" && *s != "none")
            throw std::invalid_argument("--source: '" + *s +
                                        "' is not a source; use none, null or vector");
        if (std::find(sources.begin(), s, *s) != s)
            throw std::invalid_argument("--source: '" + *s +
                                        "' is given twice; give each source once");
    }
}

std::string bench_options::sink_figure(const std::string& bench,
                                       const std::string& source)
{
    return source == "none" ? bench : bench + "_" + source + "_source";
}

sender_options bench_options::sender(std::size_t packet, double rate_gbps) const
{
    sender_options o;
    o.packet = packet;
    o.rate_gbps = rate_gbps;
    o.heap_size = heap_size;
    o.seconds = seconds;
    o.burst = burst;
    // A sender at a set rate is the load of a receive benchmark (recv, loopback), not
    // what is measured: it costs the receiver's cores least from one cached buffer.
    o.one_buffer = rate_gbps > 0;
    return o;
}

std::vector<double> parse_rates(const std::string& text)
{
    std::string spaced = text;
    std::replace(spaced.begin(), spaced.end(), ',', ' ');
    std::istringstream in(spaced);
    std::vector<double> out;
    std::string word;
    while (in >> word) {
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(word, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != word.size() || !(v > 0) || !std::isfinite(v))
            throw std::invalid_argument("--rates: '" + word +
                                        "' is not a rate; give Gb/s > 0, e.g. 2,4,8");
        out.push_back(v);
    }
    if (out.empty())
        throw std::invalid_argument(
            "--rates: give at least one rate in Gb/s, e.g. 2,4,8");
    return out;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
