/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_bench send and recv: the UDP transport alone, without GNU Radio.
//   send: send::udp_stream as fast as it goes to a socket on 127.0.0.1 that never
//         reads, and its CPU time per GiB sent.
//   recv: recv::stream with a udp_reader on 127.0.0.1, fed by a child process at set
//         rates: the highest lossless rate and the receive side's CPU per GiB.

#include "bench_modes.h"
#include "bench_sockets.h"
#include "bench_trials.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/recv_udp.h>
#include <atomic>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <thread>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

send_figures send_run(const bench_options& options,
                      std::size_t packet,
                      int run,
                      csv_writer& csv,
                      std::size_t max_heaps)
{
    std::unique_ptr<discard_socket> discard;
    sender_options o = options.sender(packet);
    if (max_heaps > 0)
        o.max_heaps = max_heaps;
    if (!options.dest.empty()) {
        o.destination = options.dest;
    } else {
        discard = std::make_unique<discard_socket>();
        o.destination = "127.0.0.1:" + std::to_string(discard->port());
    }
    const sender_report r = send_heaps(o);
    // The sender is alone in this process: its CPU time is the process's.
    const auto cpu = cpu_per_gib::of(r.cpu, r.result.data_heaps * options.heap_size);
    std::cout << "  packet " << packet << " run " << run << "/" << options.runs << ": "
              << r.achieved_gbps << " Gb/s, " << r.stats[send_stat::packets]
              << " packets, " << r.result.data_heaps << " heaps in " << r.result.seconds
              << " s, " << o.max_heaps << " in flight";
    if (cpu)
        std::cout << "; " << describe(*cpu) << " of heap payload sent";
    if (discard)
        std::cout << " (the discard socket dropped " << discard->drops() << ")";
    std::cout << std::endl;
    if (r.result.error)
        throw std::runtime_error("sending failed: " + r.result.error.message());
    const csv_writer::run row{ "send", packet, 0.0, std::to_string(run) };
    csv.row(row, "gbps", r.achieved_gbps);
    csv.row(row, "heaps_sent", r.result.data_heaps);
    csv.row(row, "packets_sent", r.stats[send_stat::packets]);
    csv.cpu_rows(row, cpu);
    return { r.achieved_gbps, cpu };
}

int run_send(const bench_options& options, csv_writer& csv)
{
    const int runs = options.runs;
    std::cout << "send: send::udp_stream alone, as fast as possible, "
              << options.heap_size << "-byte heaps, " << options.seconds << " s per run; "
              << load_average() << "\n";
    std::vector<std::pair<std::size_t, double>> figures;
    for (std::size_t packet : options.packets) {
        std::vector<double> rates;
        std::vector<cpu_per_gib> cpus;
        for (int run = 1; run <= runs; run++) {
            const send_figures f = send_run(options, packet, run, csv);
            rates.push_back(f.gbps);
            if (f.cpu)
                cpus.push_back(*f.cpu);
        }
        std::cout << "send packet " << packet << ": " << median(rates)
                  << " Gb/s (median of " << runs << "); " << load_average() << std::endl;
        const csv_writer::run medians{ "send", packet, 0.0, "median" };
        csv.row(medians, "gbps", median(rates));
        if (const auto cpu = median_cpu(cpus)) {
            std::cout << "send packet " << packet << " CPU: " << describe(*cpu)
                      << " of heap payload sent (medians of " << cpus.size() << ")"
                      << std::endl;
            csv.cpu_rows(medians, cpu);
        }
        figures.emplace_back(packet, median(rates));
    }
    for (const auto& [packet, gbps] : figures)
        std::cout << "send_gbps_" << packet << ": " << gbps << "\n";
    return 0;
}

trial_result recv_trial(const bench_options& options,
                        std::size_t packet,
                        double rate_gbps,
                        bool announce)
{
    const std::size_t heap_size = options.heap_size;
    const std::size_t buffer = options.buffer;
    const unsigned short port = free_udp_port();

    // Forked while this process has one thread; it sends once the receiver is up.
    sender_options o = options.sender(packet, rate_gbps);
    o.destination = "127.0.0.1:" + std::to_string(port);
    forked_sender sender(o);

    recv::stream_config config;
    config.set_max_heap_size(2 * heap_size);
    recv::udp_config udp;
    udp.set_endpoints("127.0.0.1:" + std::to_string(port)).set_buffer_size(buffer);
    recv::stream stream(config);
    std::size_t granted = 0;
    {
        rmem_max_raise raise(buffer);
        granted = stream.emplace_reader<recv::udp_reader>(udp).get_granted_buffer_size();
        if (announce)
            std::cout << "  " << describe_receive_buffer(buffer, raise, granted)
                      << std::endl;
    }

    // The consumer: takes complete heaps as a block's work() would, without copying.
    std::atomic<std::uint64_t> received{ 0 };
    heap_consumer consumer(stream, [&] { received++; });

    // Until the reader has finished what is queued: the heap count stops moving.
    cpu_times used;
    const sender_report sent = receive_until_settled(
        sender, stream, recv_stat::heaps, [&] { consumer.stop(); }, used);

    const recv_stats s = stream.get_stats();
    trial_result r = trial_sent(rate_gbps, sent);
    r.heaps_received = received.load();
    r.packets_received = s[recv_stat::packets];
    r.receiver_cpu = cpu_per_gib::of(used, r.heaps_received * heap_size);
    for (recv_stat st : { recv_stat::packets_dropped_socket_overflow,
                          recv_stat::incomplete_heaps_evicted,
                          recv_stat::incomplete_heaps_flushed,
                          recv_stat::heaps_dropped_queue_full,
                          recv_stat::packets_late })
        r.drops.emplace_back(stat_name(st), s[st]);
    return r;
}

int run_recv(const bench_options& options, csv_writer& csv)
{
    std::cout << "recv: recv::stream + udp_reader on 127.0.0.1, no GNU Radio; "
              << options.heap_size << "-byte heaps, " << options.seconds
              << " s per run, sender in a child process (CPU figures: this process's "
                 "user and sys time from the sender's start until the receiver has "
                 "drained, per GiB of payload of the complete heaps received); "
              << load_average() << "\n";
    using namespace std::placeholders;
    return report_lossless_rates(options.search,
                                 options.packets,
                                 "recv",
                                 std::bind(recv_trial, std::cref(options), _1, _2, _3),
                                 csv);
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
