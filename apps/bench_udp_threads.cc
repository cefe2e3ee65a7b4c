/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_bench recv --continuous --threads N: a continuous recv::stream on N ports of
// 127.0.0.1, read by one udp_reader thread and by N (one port each), fed at one rate
// by a child process; the receive side's CPU seconds per GiB of each, and their ratio.

#include "bench_modes.h"
#include "bench_sockets.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/recv_udp.h>
#include <atomic>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {

/*! What one run of recv --continuous --threads did. */
struct cpu_run {
    std::optional<cpu_per_gib> cpu; //!< per GiB of the complete heaps received
    std::uint64_t heaps_sent = 0;
    std::uint64_t heaps_received = 0; //!< complete, in chunks
};

/*! One run: \p ports.size() ports, heap k sent to port k mod ports at \p rate_gbps;
 * read by one reader on every port (\p threads 1) or one reader per port. */
cpu_run continuous_trial(const bench_options& options,
                         std::size_t packet,
                         double rate_gbps,
                         std::size_t ports,
                         std::size_t threads)
{
    std::vector<std::string> endpoints;
    for (std::size_t p = 0; p < ports; p++)
        endpoints.push_back("127.0.0.1:" + std::to_string(free_udp_port()));
    std::string all;
    for (const auto& e : endpoints)
        all += (all.empty() ? "" : ",") + e;

    // Forked while this process has one thread; it sends once the receiver is up.
    sender_options o = options.sender(packet, rate_gbps);
    o.destination = all;
    o.timestamp_item = bench_timestamp_item;
    forked_sender sender(o);

    recv::continuous_config c;
    c.timestamp_item = bench_timestamp_item;
    c.item_bytes = 1; // timestamps count bytes: one heap's step is its size
    c.window_heaps = 8;
    recv::stream stream(
        recv::stream_config().set_max_heap_size(2 * options.heap_size).set_continuous(c));
    {
        rmem_max_raise raise(options.buffer);
        if (threads == 1)
            stream.emplace_reader<recv::udp_reader>(
                recv::udp_config().set_endpoints(all).set_buffer_size(options.buffer));
        else
            for (const auto& e : endpoints)
                stream.emplace_reader<recv::udp_reader>(
                    recv::udp_config().set_endpoints(e).set_buffer_size(options.buffer));
    }

    // The consumer: takes each chunk, counts its complete heaps, gives it back.
    std::atomic<std::uint64_t> complete{ 0 };
    std::thread consumer([&] {
        for (;;) {
            recv::chunk_entry e;
            const auto r = stream.pop_chunk(e, std::chrono::milliseconds(20));
            if (r == recv::stream::pop_result::stopped)
                break;
            if (r == recv::stream::pop_result::timeout || !e.data)
                continue;
            for (std::size_t p = 0; p < e.positions; p++)
                complete += e.data->fill(p, 0) == recv::position_fill::complete;
            stream.return_chunk(std::move(e.data));
        }
    });

    const cpu_times before = cpu_times::of_process();
    // Until the readers have finished what is queued: the packet count stops moving.
    const sender_report sent =
        send_then_settle(sender, stream, recv_stat::packets, [&] { consumer.join(); });
    const cpu_times used = cpu_times::of_process() - before;
    stream.stop();
    consumer.join();
    cpu_run out;
    out.heaps_sent = sent.result.data_heaps;
    out.heaps_received = complete.load();
    out.cpu = cpu_per_gib::of(used, out.heaps_received * options.heap_size);
    return out;
}

} // namespace

int run_recv_threads(const bench_options& options, csv_writer& csv)
{
    const std::size_t threads = options.threads;
    const double rate = options.search.rates.front();
    std::cout << "recv --continuous --threads " << threads
              << ": recv::stream (continuous) on " << threads
              << " ports of 127.0.0.1, heap k to port k mod " << threads << ", at "
              << rate << " Gb/s for " << options.seconds << " s, read by 1 udp_reader "
              << "thread on every port and by " << threads
              << " (one port each), interleaved, " << options.runs
              << " runs; CPU: this process's user and sys time per GiB of complete "
                 "heaps received; "
              << load_average() << "\n";
    for (std::size_t packet : options.packets) {
        std::vector<cpu_per_gib> one, many;
        std::vector<double> ratios;
        for (int run = 1; run <= options.runs; run++) {
            const cpu_run a = continuous_trial(options, packet, rate, threads, 1);
            const cpu_run b = continuous_trial(options, packet, rate, threads, threads);
            for (const auto& [r, n] :
                 { std::pair{ &a, std::size_t(1) }, { &b, threads } }) {
                std::cout << "  packet " << packet << " run " << run << ", " << n
                          << (n == 1 ? " thread: " : " threads: ") << r->heaps_received
                          << " of " << r->heaps_sent << " heaps complete";
                if (r->cpu)
                    std::cout << "; " << describe(*r->cpu);
                std::cout << std::endl;
                const csv_writer::run row{
                    "recv_threads_" + std::to_string(n), packet, rate, std::to_string(run)
                };
                csv.row(row, "heaps_sent", r->heaps_sent);
                csv.row(row, "heaps_received", r->heaps_received);
                csv.cpu_rows(row, r->cpu);
            }
            if (!a.cpu || !b.cpu)
                continue;
            one.push_back(*a.cpu);
            many.push_back(*b.cpu);
            ratios.push_back(b.cpu->total() / a.cpu->total());
            csv.row({ "recv_threads_" + std::to_string(threads),
                      packet,
                      rate,
                      std::to_string(run) },
                    "cpu_ratio_to_1_thread",
                    ratios.back());
        }
        if (ratios.empty()) {
            std::cout << "recv_threads packet " << packet
                      << ": no figure (no complete heap received)\n";
            continue;
        }
        const std::string n = std::to_string(threads);
        csv.cpu_rows({ "recv_threads_1", packet, rate, "median" }, median_cpu(one));
        csv.cpu_rows({ "recv_threads_" + n, packet, rate, "median" }, median_cpu(many));
        csv.row({ "recv_threads_" + n, packet, rate, "median" },
                "cpu_ratio_to_1_thread",
                median(ratios));
        const auto totals = [](const std::vector<cpu_per_gib>& runs) {
            std::vector<double> out;
            for (const cpu_per_gib& c : runs)
                out.push_back(c.total());
            return median(out);
        };
        std::cout << "recv_threads packet " << packet << ": 1 thread " << totals(one)
                  << " CPU s/GiB, " << threads << " threads " << totals(many)
                  << " CPU s/GiB; ratio " << median(ratios) << " (medians of "
                  << ratios.size() << " runs)\n";
        std::cout << "recv_threads_" << n << "_cpu_ratio_" << packet << ": "
                  << median(ratios) << "\n";
    }
    return 0;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
