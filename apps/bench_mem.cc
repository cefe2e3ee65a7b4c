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
#include <cstring>
#include <deque>
#include <iostream>
#include <stdexcept>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {

/*! Heap storages the assembler's pool keeps: more than a pass holds at once (the
 * consumer's copy_ring and the live heap), so that every one comes back for reuse. */
constexpr std::size_t pool_heaps = copy_ring + 4;

timed_pass assemble_pass(const packet_set& set,
                         std::size_t heap_size,
                         const std::shared_ptr<recv::detail::heap_pool>& pool,
                         recv_stats& stats)
{
    recv::assembler_config config;
    config.max_heap_size = heap_size;
    std::size_t delivered = 0;
    // Hold the last heaps like a consumer's queue would, so the assembler cycles through
    // as many buffers as the ceiling's ring instead of reusing one hot buffer.
    std::deque<recv::heap> held;
    recv::heap_assembler assembler(config, pool, [&delivered, &held](recv::heap&& h) {
        delivered += h.is_complete();
        held.push_back(std::move(h));
        if (held.size() >= copy_ring)
            held.pop_front();
    });
    const pass_timer timer;
    for (const auto& p : set.packets)
        assembler.add_packet(p.data, p.size);
    const timed_pass pass = timer.done();
    stats = assembler.stats();
    if (delivered != set.heaps)
        throw std::runtime_error("assembled " + std::to_string(delivered) + " of " +
                                 std::to_string(set.heaps) + " heaps");
    return pass;
}

chunk_config placement_config(std::size_t heap_size)
{
    chunk_config config;
    config.timeline.timestamp_step = heap_size;
    config.timeline.window_heaps = copy_ring;
    config.heap_bytes = heap_size;
    config.timestamp_item = bench_timestamp_item;
    return config;
}

using chunk_list = std::vector<std::unique_ptr<recv::chunk>>;

/*! Continuous mode: each packet decoded and copied once to its heap's position in a
 * chunk, with a window of as many heaps as the ceiling's ring; chunks handed on are
 * reused at once, as a consumer that keeps up would give them back. \p free holds the
 * chunks from pass to pass; any the pass needs beyond them are made and touched before
 * the timer starts. */
timed_pass place_pass(const packet_set& set,
                      const chunk_config& config,
                      chunk_list& free,
                      recv_stats& stats)
{
    while (free.size() < config.live_chunks()) {
        auto c = std::make_unique<recv::chunk>(
            config.positions_per_chunk(), 1, config.heap_bytes);
        // Placement writes every byte of it: touched now, its pages are faulted in
        // here and not in the timed loop.
        std::memset(c->data(0), 0, config.positions_per_chunk() * config.heap_bytes);
        free.push_back(std::move(c));
    }
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
    const pass_timer timer;
    for (const auto& p : set.packets) {
        packet_header header;
        if (!chunks.add_repeat(p.data, p.size) &&
            decode_packet(p.data, p.size, header) == decode_result::ok)
            chunks.add_packet(header);
    }
    chunks.flush();
    const timed_pass pass = timer.done();
    stats = chunks.stats();
    if (complete != set.heaps)
        throw std::runtime_error("placed " + std::to_string(complete) + " of " +
                                 std::to_string(set.heaps) + " heaps whole");
    return pass;
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
    // In a round of regenerate's pairing with spead2-mem-decode, trials are numbered on
    // from the earlier rounds' and the round's medians go to mem_pair, trial = round.
    const int first_trial = o.round > 0 ? (o.round - 1) * repeat + 1 : 1;
    if (o.round > 0)
        std::cout << "mem: round " << o.round << " (trials " << first_trial << " to "
                  << first_trial + repeat - 1 << ")\n";
    for (std::size_t packet_size : o.packets) {
        heap_numbering numbering;
        numbering.timestamped = continuous;
        const packet_set set = make_packets(heap_size, packet_size, total, numbering);
        std::cout << "mem: " << set.packets.size() << " packets of " << packet_size
                  << " bytes, " << set.heaps << " heaps of " << heap_size << " bytes, "
                  << set.packet_bytes / double(1 << 20) << " MiB in memory\n";
        // Every buffer a timed pass writes is made once per packet size and touched
        // before the first timed pass: memcpy's ring as it is made, the decode's pool
        // (or chunks) in the untimed warm-up pass below, so that no timed pass takes a
        // page fault, as none of spead2-mem-decode's does (its pool touches its buffers
        // when it makes them). A pool made per pass had the decode fault its buffers
        // in inside the timed loop, 256 to 1025 faults per pass (256 per 1 MiB buffer,
        // fewer when glibc handed back memory it had kept): a cost per pass that weighs
        // most at 8972 B, where a pass is shortest, and varies with what glibc kept. The
        // warm-up also keeps a process's first pass over cold code out of the trials.
        copy_buffers ring = make_copy_buffers(heap_size);
        const auto pool = recv::detail::heap_pool::create(pool_heaps);
        const chunk_config placement = placement_config(heap_size);
        chunk_list chunks;
        recv_stats stats;
        const auto decode = [&]() {
            return continuous ? place_pass(set, placement, chunks, stats)
                              : assemble_pass(set, heap_size, pool, stats);
        };
        const timed_pass warm_copy = memcpy_pass(set, ring);
        const timed_pass warm_decode = decode();
        std::cout << "  warm-up pass (not counted): page faults memcpy "
                  << warm_copy.page_faults << ", " << what << " "
                  << warm_decode.page_faults << "\n";
        std::vector<double> ratios, rates, ceilings;
        for (int r = 0; r < repeat; r++) {
            // alternate so neither side always runs with a warmer cache
            const timed_pass copy = memcpy_pass(set, ring);
            const timed_pass decoded = decode();
            const double gbps = set.payload_bytes * 8 / decoded.seconds / 1e9;
            const double ceiling = set.payload_bytes * 8 / copy.seconds / 1e9;
            rates.push_back(gbps);
            ceilings.push_back(ceiling);
            ratios.push_back(gbps / ceiling);
            const int trial = first_trial + r;
            std::cout << "  run " << trial << ": " << what << " " << gbps
                      << " Gb/s, memcpy ceiling " << ceiling << " Gb/s, ratio "
                      << gbps / ceiling << "; page faults memcpy " << copy.page_faults
                      << ", " << what << " " << decoded.page_faults << "\n";
            csv.rows({ csv_bench, packet_size, 0.0, std::to_string(trial) },
                     { { "gbps", gbps },
                       { "memcpy_gbps", ceiling },
                       { "ratio_to_memcpy", gbps / ceiling } });
        }
        const csv_writer::run medians =
            o.round > 0
                ? csv_writer::run{ "mem_pair", packet_size, 0.0, std::to_string(o.round) }
                : csv_writer::run{ csv_bench, packet_size, 0.0, "median" };
        csv.rows(medians,
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
