/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_bench: throughput figures for gr-spead.
//
//   spead_bench mem [--packet N] [--heap-size N] [--total-bytes N] [--repeat N]
//
// mem: cuts heaps into packets in memory, then decodes and assembles them on one
// thread, next to a memcpy ceiling measured in the same run on the same bytes (each
// packet's payload copied to its place in a reused ring of heap-sized buffers).

#include "protocol/heap_assembler.h"
#include "protocol/packetiser.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/send_heap.h>
#include <boost/program_options.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace po = boost::program_options;
using namespace gr::spead;
using clock_type = std::chrono::steady_clock;

namespace {

/*! Heap-sized buffers the memcpy ceiling cycles through; the assembler's consumer holds
 * heaps so that it cycles through as many. */
constexpr std::size_t copy_ring = 4;

/*! Packets laid out back to back in one big buffer, as a NIC ring would hold them. */
struct packet_set {
    std::vector<std::uint8_t> bytes;
    std::vector<recv::packet_view> packets;
    /*! Per packet: where its payload starts and where it belongs in the heap. The
     * ceiling uses these so it does no parsing at all. */
    struct copy {
        std::size_t payload_start;
        std::size_t heap_offset;
    };
    std::vector<copy> copies;
    std::size_t heaps = 0;
    std::uint64_t payload_bytes = 0; //!< heap payload carried (what memcpy copies)
    std::uint64_t packet_bytes = 0;  //!< SPEAD packet bytes (what the link carries)
};

packet_set
make_packets(std::size_t heap_size, std::size_t packet_size, std::uint64_t total)
{
    packet_set set;
    std::vector<std::uint8_t> value(heap_size);
    std::minstd_rand rng;
    for (auto& b : value)
        b = std::uint8_t(rng());
    send::heap h;
    h.add_item(0x1000, value.data(), value.size());

    const std::size_t heaps = std::max<std::uint64_t>(1, total / heap_size);
    // size the buffer once: the packetiser's own arithmetic decides the packet count
    std::vector<std::uint8_t> header(packet_size);
    std::vector<send::packet_piece> pieces;
    std::size_t per_heap = 0;
    {
        send::packet_generator gen(h, 1, packet_size);
        while (gen.has_next()) {
            pieces.clear();
            gen.next(header.data(), pieces);
            per_heap++;
        }
    }
    set.bytes.resize(heaps * per_heap * packet_size);
    std::vector<std::size_t> offsets;
    std::size_t pos = 0;
    for (std::size_t cnt = 1; cnt <= heaps; cnt++) {
        send::packet_generator gen(h, cnt, packet_size);
        while (gen.has_next()) {
            pieces.clear();
            const std::size_t size = gen.next(header.data(), pieces);
            std::uint8_t* out = set.bytes.data() + pos;
            const std::size_t header_size = pieces[0].length;
            std::uint64_t payload_offset = 0;
            for (std::size_t b = 0; b < 8; b++) // HEAP_OFFSET: low 5 bytes of 3rd pointer
                payload_offset = (payload_offset << 8) | header.data()[8 + 16 + b];
            payload_offset &= (std::uint64_t(1) << 40) - 1;
            set.copies.push_back({ header_size, std::size_t(payload_offset) });
            for (const auto& piece : pieces) {
                std::memcpy(out, piece.data, piece.length);
                out += piece.length;
            }
            offsets.push_back(pos);
            set.packets.push_back({ nullptr, size });
            set.packet_bytes += size;
            pos += size;
        }
        set.payload_bytes += heap_size;
    }
    for (std::size_t i = 0; i < set.packets.size(); i++)
        set.packets[i].data = set.bytes.data() + offsets[i];
    set.heaps = heaps;
    return set;
}

/*! The ceiling: each packet's payload copied to its heap offset in a ring of buffers. */
double memcpy_seconds(const packet_set& set, std::size_t heap_size)
{
    std::vector<std::vector<std::uint8_t>> buffers(copy_ring,
                                                   std::vector<std::uint8_t>(heap_size));
    std::size_t heap_index = 0;
    const auto start = clock_type::now();
    for (std::size_t i = 0; i < set.packets.size(); i++) {
        const auto& p = set.packets[i];
        const auto& c = set.copies[i];
        const std::size_t length = p.size - c.payload_start;
        std::memcpy(buffers[heap_index % copy_ring].data() + c.heap_offset,
                    p.data + c.payload_start,
                    length);
        if (c.heap_offset + length == heap_size)
            heap_index++;
    }
    const std::chrono::duration<double> elapsed = clock_type::now() - start;
    volatile std::uint8_t sink = buffers[0][heap_size / 2];
    (void)sink;
    return elapsed.count();
}

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

int run_mem(const po::variables_map& vm)
{
    const std::size_t heap_size = vm["heap-size"].as<std::size_t>();
    const std::uint64_t total = vm["total-bytes"].as<std::uint64_t>();
    const int repeat = vm["repeat"].as<int>();
    for (std::size_t packet_size : vm["packet"].as<std::vector<std::size_t>>()) {
        const packet_set set = make_packets(heap_size, packet_size, total);
        std::cout << "mem: " << set.packets.size() << " packets of " << packet_size
                  << " bytes, " << set.heaps << " heaps of " << heap_size << " bytes, "
                  << set.packet_bytes / double(1 << 20) << " MiB in memory\n";
        std::vector<double> ratios, rates, ceilings;
        recv_stats stats;
        for (int r = 0; r < repeat; r++) {
            // alternate so neither side always runs with a warmer cache
            const double copy = memcpy_seconds(set, heap_size);
            const double assemble = assemble_seconds(set, heap_size, stats);
            const double gbps = set.payload_bytes * 8 / assemble / 1e9;
            const double ceiling = set.payload_bytes * 8 / copy / 1e9;
            rates.push_back(gbps);
            ceilings.push_back(ceiling);
            ratios.push_back(gbps / ceiling);
            std::cout << "  run " << r + 1 << ": decode+assemble " << gbps
                      << " Gb/s, memcpy ceiling " << ceiling << " Gb/s, ratio "
                      << gbps / ceiling << "\n";
        }
        auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            return v[v.size() / 2];
        };
        std::cout << "packet " << packet_size << ": decode+assemble " << median(rates)
                  << " Gb/s, memcpy " << median(ceilings) << " Gb/s, ratio "
                  << median(ratios) << " (median of " << repeat << ")\n";
        std::cout << "  heaps: " << stats[recv_stat::heaps]
                  << " packets: " << stats[recv_stat::packets] << "\n";
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    po::options_description options("spead_bench options");
    // clang-format off
    options.add_options()
        ("help,h", "show this help")
        ("packet", po::value<std::vector<std::size_t>>()->multitoken()
             ->default_value({ 8972, 1472 }, "8972 1472"), "packet sizes (bytes)")
        ("heap-size", po::value<std::size_t>()->default_value(1 << 20), "heap payload (bytes)")
        ("total-bytes", po::value<std::uint64_t>()->default_value(std::uint64_t(1) << 30),
             "mem: bytes of heaps built in memory")
        ("repeat", po::value<int>()->default_value(5), "mem: runs per packet size");
    // clang-format on
    po::options_description hidden;
    hidden.add_options()("mode", po::value<std::string>()->default_value("mem"), "mode");
    po::positional_options_description positional;
    positional.add("mode", 1);
    po::options_description all;
    all.add(options).add(hidden);
    po::variables_map vm;
    try {
        po::store(
            po::command_line_parser(argc, argv).options(all).positional(positional).run(),
            vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "spead_bench: " << e.what() << "\n" << options;
        return 2;
    }
    if (vm.count("help")) {
        std::cout << "usage: spead_bench [mem] [options]\n" << options;
        return 0;
    }
    const std::string mode = vm["mode"].as<std::string>();
    try {
        if (mode == "mem")
            return run_mem(vm);
    } catch (const std::exception& e) {
        std::cerr << "spead_bench: " << e.what() << "\n";
        return 1;
    }
    std::cerr << "spead_bench: unknown mode '" << mode << "'; use mem\n";
    return 2;
}
