/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_bench mem: heaps cut into packets in memory, then decoded and assembled (or,
// with --continuous, placed into chunks) on one thread, next to a memcpy ceiling
// measured in the same run on the same bytes.

#include "bench_modes.h"
#include "bench_packets.h"
#include "protocol/chunk_assembler.h"
#include "protocol/heap_assembler.h"
#include <algorithm>
#include <chrono>
#include <deque>
#include <iostream>
#include <stdexcept>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {

double assemble_seconds(const packet_set& set, std::size_t heap_size, recv_stats& stats)
{
    recv::assembler_config config;
    config.max_heap_size = heap_size;
    std::size_t delivered = 0;
    // Hold the last heaps like a consumer's queue would, so the assembler cycles through
    // as many buffers as the ceiling's ring instead of reusing one hot buffer.
    std::deque<recv::heap> held;
    recv::heap_assembler assembler(config,
                                   recv::detail::heap_pool::create(copy_ring + 4),
                                   [&delivered, &held](recv::heap&& h) {
                                       delivered += h.is_complete();
                                       held.push_back(std::move(h));
                                       if (held.size() >= copy_ring)
                                           held.pop_front();
                                   });
    const auto start = clock_type::now();
    for (const auto& p : set.packets)
        assembler.add_packet(p.data, p.size);
    const std::chrono::duration<double> elapsed = clock_type::now() - start;
    stats = assembler.stats();
    if (delivered != set.heaps)
        throw std::runtime_error("assembled " + std::to_string(delivered) + " of " +
                                 std::to_string(set.heaps) + " heaps");
    return elapsed.count();
}

/*! Continuous mode: each packet decoded and copied once to its heap's position in a
 * chunk, with a window of as many heaps as the ceiling's ring; chunks handed on are
 * reused at once, as a consumer that keeps up would give them back. */
double place_seconds(const packet_set& set, std::size_t heap_size, recv_stats& stats)
{
    chunk_config config;
    config.timeline.timestamp_step = heap_size;
    config.timeline.window_heaps = copy_ring;
    config.heap_bytes = heap_size;
    config.timestamp_item = bench_timestamp_item;
    std::vector<std::unique_ptr<recv::chunk>> free;
    for (std::size_t i = 0; i < config.live_chunks(); i++)
        free.push_back(
            std::make_unique<recv::chunk>(config.positions_per_chunk(), 1, heap_size));
    std::size_t complete = 0;
    chunk_assembler chunks(
        config,
        [&free]() {
            std::unique_ptr<recv::chunk> c;
            if (!free.empty()) {
                c = std::move(free.back());
                free.pop_back();
            }
            return c;
        },
        [&](recv::chunk_entry&& e) {
            for (std::size_t p = 0; e.data && p < e.positions; p++)
                complete += e.data->fill(p, 0) == recv::position_fill::complete;
            if (e.data)
                free.push_back(std::move(e.data));
        });
    const auto start = clock_type::now();
    for (const auto& p : set.packets) {
        packet_header header;
        if (!chunks.add_repeat(p.data, p.size) &&
            decode_packet(p.data, p.size, header) == decode_result::ok)
            chunks.add_packet(header);
    }
    chunks.flush();
    const std::chrono::duration<double> elapsed = clock_type::now() - start;
    stats = chunks.stats();
    if (complete != set.heaps)
        throw std::runtime_error("placed " + std::to_string(complete) + " of " +
                                 std::to_string(set.heaps) + " heaps whole");
    return elapsed.count();
}

} // namespace

int run_mem(const bench_options& o, csv_writer& csv)
{
    if (o.threads > 1)
        return run_mem_threads(o, csv);
    const std::size_t heap_size = o.heap_size;
    const std::uint64_t total = o.total_bytes;
    const int repeat = o.repeat;
    const bool continuous = o.continuous;
    const char* const what = continuous ? "decode+place" : "decode+assemble";
    const std::string csv_bench = continuous ? "mem_continuous" : "mem";
    for (std::size_t packet_size : o.packets) {
        heap_numbering numbering;
        numbering.timestamped = continuous;
        const packet_set set = make_packets(heap_size, packet_size, total, numbering);
        std::cout << "mem: " << set.packets.size() << " packets of " << packet_size
                  << " bytes, " << set.heaps << " heaps of " << heap_size << " bytes, "
                  << set.packet_bytes / double(1 << 20) << " MiB in memory\n";
        std::vector<double> ratios, rates, ceilings;
        recv_stats stats;
        for (int r = 0; r < repeat; r++) {
            // alternate so neither side always runs with a warmer cache
            const double copy = memcpy_seconds(set, heap_size);
            const double assemble = continuous ? place_seconds(set, heap_size, stats)
                                               : assemble_seconds(set, heap_size, stats);
            const double gbps = set.payload_bytes * 8 / assemble / 1e9;
            const double ceiling = set.payload_bytes * 8 / copy / 1e9;
            rates.push_back(gbps);
            ceilings.push_back(ceiling);
            ratios.push_back(gbps / ceiling);
            std::cout << "  run " << r + 1 << ": " << what << " " << gbps
                      << " Gb/s, memcpy ceiling " << ceiling << " Gb/s, ratio "
                      << gbps / ceiling << "\n";
            csv.rows({ csv_bench, packet_size, 0.0, std::to_string(r + 1) },
                     { { "gbps", gbps },
                       { "memcpy_gbps", ceiling },
                       { "ratio_to_memcpy", gbps / ceiling } });
        }
        csv.rows({ csv_bench, packet_size, 0.0, "median" },
                 { { "gbps", median(rates) },
                   { "memcpy_gbps", median(ceilings) },
                   { "ratio_to_memcpy", median(ratios) } });
        std::cout << "packet " << packet_size << ": " << what << " " << median(rates)
                  << " Gb/s, memcpy " << median(ceilings) << " Gb/s, ratio "
                  << median(ratios) << " (median of " << repeat << ")\n";
        // Other work on the machine only ever slows a run down, so the fastest run of
        // each side is the steadiest figure on a shared machine.
        const double best_rate = *std::max_element(rates.begin(), rates.end());
        const double best_ceiling = *std::max_element(ceilings.begin(), ceilings.end());
        std::cout << "  best runs: " << what << " " << best_rate << " Gb/s, memcpy "
                  << best_ceiling << " Gb/s, ratio " << best_rate / best_ceiling << "\n";
        std::cout << "  heaps: " << stats[recv_stat::heaps]
                  << " packets: " << stats[recv_stat::packets] << "\n";
    }
    return 0;
}

// ---- send and recv -------------------------------------------------------------------

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
