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
//   spead_bench loopback [--packet N...] [--rates R,...] [--max-heap-size N]
//   [--queue-heaps N] [--continuous]
//   spead_bench sink [--packet N...] [--seconds S] [--runs N] [--source
//   null|vector|none]
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
// loopback and sink run GNU Radio flowgraphs with the blocks (bench_flowgraph.cc).

#include "bench_common.h"
#include "protocol/chunk_assembler.h"
#include "protocol/heap_assembler.h"
#include "protocol/packetiser.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/send_heap.h>
#include <system_error>
#include <unistd.h>
#include <boost/program_options.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace po = boost::program_options;
using namespace gr::spead;
using clock_type = std::chrono::steady_clock;
namespace bench = gr::spead::apps::bench;

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

/*! Immediate item carrying a heap's timestamp when the packets are timestamped. */
constexpr std::uint64_t timestamp_item = 0x1600;

/*! Immediate item naming a heap's substream (mem --threads). */
constexpr std::uint64_t substream_item = 0x1601;

/*! Which heaps a packet set holds: heap k (from 0) has cnt k × substreams + substream
 * + 1 and, when timestamped, timestamp k × heap size, as a digitiser sends it. */
struct heap_numbering {
    bool timestamped = false;
    std::size_t substream = 0;
    std::size_t substreams = 1;
};

/*! Heap \p k of the packet set: the value item and the timestamp item (in the first
 * packet; with several substreams it and the substream item are in every packet, so
 * that each thread's packets place on their own). */
send::heap bench_heap(const std::vector<std::uint8_t>& value,
                      std::size_t k,
                      const heap_numbering& numbering)
{
    send::heap h;
    h.add_item(0x1000, value.data(), value.size());
    if (numbering.timestamped) {
        h.add_immediate(timestamp_item, k * value.size());
        if (numbering.substreams > 1) {
            h.add_immediate(substream_item, numbering.substream);
            h.set_repeat_immediates(true);
        }
    }
    return h;
}

packet_set make_packets(std::size_t heap_size,
                        std::size_t packet_size,
                        std::uint64_t total,
                        const heap_numbering& numbering)
{
    packet_set set;
    std::vector<std::uint8_t> value(heap_size);
    std::minstd_rand rng;
    for (auto& b : value)
        b = std::uint8_t(rng());
    const send::heap h = bench_heap(value, 0, numbering);

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
    for (std::size_t k = 0; k < heaps; k++) {
        const send::heap hc = bench_heap(value, k, numbering);
        const std::size_t cnt = k * numbering.substreams + numbering.substream + 1;
        send::packet_generator gen(hc, cnt, packet_size);
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

/*! Continuous mode: each packet decoded and copied once to its heap's position in a
 * chunk, with a window of as many heaps as the ceiling's ring; chunks handed on are
 * reused at once, as a consumer that keeps up would give them back. */
double place_seconds(const packet_set& set, std::size_t heap_size, recv_stats& stats)
{
    chunk_config config;
    config.timeline.timestamp_step = heap_size;
    config.timeline.window_heaps = copy_ring;
    config.heap_bytes = heap_size;
    config.timestamp_item = timestamp_item;
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

/*! Heaps each reader of mem --threads has handed over; a reader keeps within
 * max_lead heaps of the slowest, as a network paces its receive threads. */
struct reader_pace {
    explicit reader_pace(std::size_t readers) : done(readers) {}
    static constexpr std::uint64_t max_lead = 4; //!< inside the window of 8
    std::vector<std::atomic<std::uint64_t>> done;
    std::uint64_t slowest() const
    {
        std::uint64_t out = ~std::uint64_t(0);
        for (const auto& d : done)
            out = std::min(out, d.load());
        return out;
    }
};

/*! mem --threads: hands a prepared list of packets to the stream from its own thread,
 * in batches as a socket reader would, as fast as the stream takes them and no faster
 * than its consumer returns chunks. */
class memory_reader : public recv::reader
{
public:
    memory_reader(recv::stream& s,
                  std::vector<recv::packet_view> packets,
                  std::size_t packets_per_heap,
                  reader_pace& pace,
                  std::size_t index,
                  const std::atomic<bool>& go)
        : reader(s),
          d_packets(std::move(packets)),
          d_per_heap(packets_per_heap),
          d_pace(pace),
          d_index(index),
          d_go(go)
    {
    }

protected:
    void run() override
    {
        constexpr std::size_t batch = 64; // udp_reader's recvmmsg batch
        while (!d_go.load() && !stopping())
            std::this_thread::yield();
        const std::size_t heaps = d_packets.size() / d_per_heap;
        for (std::size_t k = 0; k < heaps && !stopping(); k++) {
            while (k > d_pace.slowest() + reader_pace::max_lead && !stopping())
                std::this_thread::yield();
            const std::size_t end = (k + 1) * d_per_heap;
            for (std::size_t i = k * d_per_heap; i < end;) {
                // Never more than the queue has room for: a consumer that loses the
                // CPU to the readers for a while (two cores, busy) slows the figure
                // rather than losing positions.
                const std::size_t room =
                    wait_for_queue_space(std::chrono::milliseconds(10));
                if (stopping())
                    return;
                const std::size_t n = std::min({ batch, end - i, room });
                if (n == 0)
                    continue;
                if (!add_packets(d_packets.data() + i, n))
                    return;
                i += n;
            }
            d_pace.done[d_index].store(k + 1);
        }
    }

private:
    std::vector<recv::packet_view> d_packets;
    std::size_t d_per_heap; //!< packets of one position (its substreams' heaps)
    reader_pace& d_pace;
    std::size_t d_index;
    const std::atomic<bool>& d_go;
};

/*! " name=value" for each counter that is not zero. */
std::string nonzero_counters(const recv_stats& stats)
{
    std::string out;
    for (const auto& [name, value] : stats.items())
        if (value != 0)
            out += " " + name + "=" + std::to_string(value);
    return out;
}

/*! What a threaded placement run did. */
struct threaded_run {
    double seconds = 0;             //!< steady state: after the warm-up positions
    std::uint64_t steady_bytes = 0; //!< payload placed in those seconds
    std::uint64_t complete = 0;     //!< (position, substream) complete
    std::uint64_t lost = 0;         //!< positions lost (the consumer fell behind)
    recv_stats stats;
};

/*!
 * A continuous recv::stream with one substream per set, fed by \p threads readers
 * (substream s on reader s mod threads, heap by heap, within two heaps of each other),
 * timed in the steady state (once the chunks the stream allocates on first need have
 * gone round) until the consumer (this thread, returning each chunk at once) has the
 * last chunk. \p threads divides the substreams.
 */
threaded_run stream_place(const std::vector<packet_set>& sets,
                          std::size_t heap_size,
                          std::size_t threads)
{
    const std::size_t substreams = sets.size();
    recv::continuous_config c;
    c.timestamp_item = timestamp_item;
    c.item_bytes = 1; // timestamps count bytes: one heap's step is its size
    c.window_heaps = 8;
    c.substreams = substreams;
    c.substream_item = substream_item;
    // Slack for a consumer that shares the two cores with the readers.
    c.queue_positions = 64;
    recv::stream s(recv::stream_config().set_max_heap_size(heap_size).set_continuous(c));
    const std::size_t heaps = sets[0].heaps;
    const std::size_t per_heap = sets[0].packets.size() / heaps;
    std::vector<std::vector<recv::packet_view>> lists(threads);
    for (std::size_t k = 0; k < heaps; k++)
        for (std::size_t sub = 0; sub < substreams; sub++) {
            const auto first = sets[sub].packets.begin() + std::ptrdiff_t(k * per_heap);
            lists[sub % threads].insert(
                lists[sub % threads].end(), first, first + std::ptrdiff_t(per_heap));
        }
    std::atomic<bool> go{ false };
    reader_pace pace(threads);
    for (std::size_t t = 0; t < threads; t++)
        s.emplace_reader<memory_reader>(
            std::move(lists[t]), per_heap * (substreams / threads), pace, t, go);

    threaded_run out;
    // The stream allocates its chunks on first need (page faults); the figure is the
    // steady state after the first chunks any run could allocate have gone round.
    const std::size_t warm_positions = c.window_heaps + 1 + c.queue_positions;
    if (heaps <= 2 * warm_positions)
        throw std::invalid_argument("--total-bytes: " + std::to_string(heaps) +
                                    " heaps per substream; mem --threads needs more "
                                    "than " +
                                    std::to_string(2 * warm_positions));
    std::uint64_t positions = 0;
    auto start = clock_type::now();
    go.store(true);
    for (int idle = 0;;) {
        recv::chunk_entry e;
        const auto r = s.pop_chunk(e, std::chrono::seconds(1));
        if (r == recv::stream::pop_result::stopped)
            break;
        if (r == recv::stream::pop_result::timeout) {
            if (++idle == 30)
                throw std::runtime_error("mem --threads: no chunk for 30 s");
            continue;
        }
        idle = 0;
        if (positions < warm_positions && positions + e.positions >= warm_positions)
            start = clock_type::now();
        positions += e.positions;
        if (!e.data) {
            out.lost += e.positions;
            continue;
        }
        for (std::size_t p = 0; p < e.positions; p++)
            for (std::size_t sub = 0; sub < substreams; sub++)
                out.complete += e.data->fill(p, sub) == recv::position_fill::complete;
        s.return_chunk(std::move(e.data));
    }
    const std::chrono::duration<double> elapsed = clock_type::now() - start;
    out.seconds = elapsed.count();
    out.steady_bytes = (positions - warm_positions) * substreams * heap_size;
    out.stats = s.get_stats();
    if (s.has_failed())
        throw std::runtime_error("mem --threads: the stream failed: " + s.get_failure());
    return out;
}

/*! The ceiling of mem --threads: each set's payloads copied as memcpy_seconds() does,
 * one thread per set, started together; the seconds until the last is done. */
double parallel_memcpy_seconds(const std::vector<packet_set>& sets, std::size_t heap_size)
{
    std::atomic<bool> go{ false };
    std::atomic<std::size_t> ready{ 0 };
    std::vector<double> seconds(sets.size());
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < sets.size(); t++)
        threads.emplace_back([&, t] {
            ready++;
            while (!go.load())
                std::this_thread::yield();
            seconds[t] = memcpy_seconds(sets[t], heap_size);
        });
    while (ready.load() != sets.size())
        std::this_thread::yield();
    const auto start = clock_type::now();
    go.store(true);
    for (auto& t : threads)
        t.join();
    const std::chrono::duration<double> elapsed = clock_type::now() - start;
    return elapsed.count();
}

/*! mem --continuous --threads N: N substreams placed into one stream by one reader
 * thread, then by N, on the same packets; the aggregate figure of each and their
 * ratio (what the second core adds), beside the same ratio for plain memcpy (what the
 * machine's memory lets a second core add). */
int run_mem_threads(const po::variables_map& vm,
                    std::size_t threads,
                    bench::csv_writer& csv)
{
    const std::size_t heap_size = vm["heap-size"].as<std::size_t>();
    const std::uint64_t total = vm["total-bytes"].as<std::uint64_t>();
    const int repeat = vm["repeat"].as<int>();
    std::cout << "mem --threads " << threads << ": recv::stream (continuous), " << threads
              << " substreams, fed by 1 reader thread and by " << threads
              << " (one substream each); " << bench::load_average() << "\n";
    std::vector<std::pair<std::size_t, double>> figures, copy_figures;
    for (std::size_t packet_size : vm["packet"].as<std::vector<std::size_t>>()) {
        std::vector<packet_set> sets;
        for (std::size_t sub = 0; sub < threads; sub++) {
            heap_numbering numbering;
            numbering.timestamped = true;
            numbering.substream = sub;
            numbering.substreams = threads;
            sets.push_back(
                make_packets(heap_size, packet_size, total / threads, numbering));
        }
        std::cout << "mem: " << sets[0].packets.size() * threads << " packets of "
                  << packet_size << " bytes, " << sets[0].heaps << " heaps of "
                  << heap_size << " bytes per substream\n";
        std::vector<double> one, many, ratios, copy_ratios;
        for (int r = 0; r < repeat; r++) {
            // What the machine gives a second thread: memcpy alone, 1 thread and N.
            double copy_one = 0;
            for (const auto& set : sets)
                copy_one += memcpy_seconds(set, heap_size);
            const double copy_many = parallel_memcpy_seconds(sets, heap_size);
            copy_ratios.push_back(copy_one / copy_many);
            const threaded_run a = stream_place(sets, heap_size, 1);
            const threaded_run b = stream_place(sets, heap_size, threads);
            for (const threaded_run* run : { &a, &b })
                if (run->lost != 0 || run->complete != sets[0].heaps * threads)
                    throw std::runtime_error(
                        "mem --threads (" +
                        std::string(run == &a ? "1 thread" : "threads") +
                        "): " + std::to_string(run->complete) + " of " +
                        std::to_string(sets[0].heaps * threads) +
                        " heaps placed whole, " + std::to_string(run->lost) +
                        " positions lost;" + nonzero_counters(run->stats));
            one.push_back(a.steady_bytes * 8 / a.seconds / 1e9);
            many.push_back(b.steady_bytes * 8 / b.seconds / 1e9);
            ratios.push_back(many.back() / one.back());
            std::cout << "  run " << r + 1 << ": 1 thread " << one.back() << " Gb/s, "
                      << threads << " threads " << many.back() << " Gb/s, ratio "
                      << ratios.back() << "; memcpy alone: ratio " << copy_ratios.back()
                      << "\n";
            csv.rows({ "mem_threads", packet_size, 0.0, std::to_string(r + 1) },
                     { { "gbps", many.back() },
                       { "gbps_1_thread", one.back() },
                       { "ratio_to_1_thread", ratios.back() },
                       { "memcpy_ratio_to_1_thread", copy_ratios.back() } });
        }
        csv.rows({ "mem_threads", packet_size, 0.0, "median" },
                 { { "gbps", bench::median(many) },
                   { "gbps_1_thread", bench::median(one) },
                   { "ratio_to_1_thread", bench::median(ratios) },
                   { "memcpy_ratio_to_1_thread", bench::median(copy_ratios) } });
        std::cout << "packet " << packet_size << ": 1 thread " << bench::median(one)
                  << " Gb/s, " << threads << " threads " << bench::median(many)
                  << " Gb/s, ratio " << bench::median(ratios) << "; memcpy alone: ratio "
                  << bench::median(copy_ratios) << " (median of " << repeat << ")\n";
        figures.push_back({ packet_size, bench::median(ratios) });
        copy_figures.push_back({ packet_size, bench::median(copy_ratios) });
    }
    for (const auto& [packet, ratio] : figures)
        std::cout << "mem_threads_ratio_" << packet << ": " << ratio << "\n";
    for (const auto& [packet, ratio] : copy_figures)
        std::cout << "mem_threads_memcpy_ratio_" << packet << ": " << ratio << "\n";
    return 0;
}

int run_mem(const po::variables_map& vm, bench::csv_writer& csv)
{
    const std::size_t threads = vm["threads"].as<std::size_t>();
    if (threads == 0)
        throw std::invalid_argument("--threads: 0; use 1 or more reader threads");
    if (threads > 1) {
        if (!vm.count("continuous"))
            throw std::invalid_argument("--threads " + std::to_string(threads) +
                                        ": mem times several threads in continuous mode "
                                        "only; add --continuous");
        return run_mem_threads(vm, threads, csv);
    }
    const std::size_t heap_size = vm["heap-size"].as<std::size_t>();
    const std::uint64_t total = vm["total-bytes"].as<std::uint64_t>();
    const int repeat = vm["repeat"].as<int>();
    const bool continuous = vm.count("continuous") > 0;
    const char* const what = continuous ? "decode+place" : "decode+assemble";
    const std::string csv_bench = continuous ? "mem_continuous" : "mem";
    for (std::size_t packet_size : vm["packet"].as<std::vector<std::size_t>>()) {
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
                 { { "gbps", bench::median(rates) },
                   { "memcpy_gbps", bench::median(ceilings) },
                   { "ratio_to_memcpy", bench::median(ratios) } });
        std::cout << "packet " << packet_size << ": " << what << " "
                  << bench::median(rates) << " Gb/s, memcpy " << bench::median(ceilings)
                  << " Gb/s, ratio " << bench::median(ratios) << " (median of " << repeat
                  << ")\n";
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

bench::sender_options sender_options_from(const po::variables_map& vm, std::size_t packet)
{
    bench::sender_options o;
    o.packet = packet;
    o.heap_size = vm["heap-size"].as<std::size_t>();
    o.seconds = vm["seconds"].as<double>();
    o.burst = vm["burst"].as<std::size_t>();
    return o;
}

int run_send(const po::variables_map& vm, bench::csv_writer& csv)
{
    const int runs = vm["runs"].as<int>();
    std::cout << "send: send::udp_stream alone, as fast as possible, "
              << vm["heap-size"].as<std::size_t>() << "-byte heaps, "
              << vm["seconds"].as<double>() << " s per run; " << bench::load_average()
              << "\n";
    std::vector<std::pair<std::size_t, double>> figures;
    const std::size_t heap_size = vm["heap-size"].as<std::size_t>();
    for (std::size_t packet : vm["packet"].as<std::vector<std::size_t>>()) {
        std::vector<double> rates;
        std::vector<bench::cpu_per_gib> cpus;
        for (int run = 1; run <= runs; run++) {
            std::unique_ptr<bench::discard_socket> discard;
            bench::sender_options o = sender_options_from(vm, packet);
            if (vm.count("dest")) {
                o.destination = vm["dest"].as<std::string>();
            } else {
                discard = std::make_unique<bench::discard_socket>();
                o.destination = "127.0.0.1:" + std::to_string(discard->port());
            }
            const bench::sender_report r = bench::send_heaps(o);
            // The sender is alone in this process: its CPU time is the process's.
            const auto cpu =
                bench::cpu_per_gib::of(r.cpu, r.result.data_heaps * heap_size);
            rates.push_back(r.achieved_gbps);
            std::cout << "  packet " << packet << " run " << run << "/" << runs << ": "
                      << r.achieved_gbps << " Gb/s, " << r.stats[send_stat::packets]
                      << " packets, " << r.result.data_heaps << " heaps in "
                      << r.result.seconds << " s";
            if (cpu) {
                cpus.push_back(*cpu);
                std::cout << "; " << bench::describe(*cpu) << " of heap payload sent";
            }
            if (discard)
                std::cout << " (the discard socket dropped " << discard->drops() << ")";
            std::cout << std::endl;
            if (r.result.error)
                throw std::runtime_error("sending failed: " + r.result.error.message());
            const bench::csv_writer::run row{ "send", packet, 0.0, std::to_string(run) };
            csv.row(row, "gbps", r.achieved_gbps);
            csv.row(row, "heaps_sent", r.result.data_heaps);
            csv.row(row, "packets_sent", r.stats[send_stat::packets]);
            csv.cpu_rows(row, cpu);
        }
        std::cout << "send packet " << packet << ": " << bench::median(rates)
                  << " Gb/s (median of " << runs << "); " << bench::load_average()
                  << std::endl;
        const bench::csv_writer::run medians{ "send", packet, 0.0, "median" };
        csv.row(medians, "gbps", bench::median(rates));
        if (const auto cpu = bench::median_cpu(cpus)) {
            std::cout << "send packet " << packet << " CPU: " << bench::describe(*cpu)
                      << " of heap payload sent (medians of " << cpus.size() << ")"
                      << std::endl;
            csv.cpu_rows(medians, cpu);
        }
        figures.emplace_back(packet, bench::median(rates));
    }
    for (const auto& [packet, gbps] : figures)
        std::cout << "send_gbps_" << packet << ": " << gbps << "\n";
    return 0;
}

/*! One run of recv::stream + udp_reader at \p rate_gbps, fed by a child process. */
bench::trial_result recv_trial(const po::variables_map& vm,
                               std::size_t packet,
                               double rate_gbps,
                               bool announce)
{
    const std::size_t heap_size = vm["heap-size"].as<std::size_t>();
    const std::size_t buffer = vm["buffer"].as<std::size_t>();
    const unsigned short port = bench::free_udp_port();

    // Forked while this process has one thread; it sends once the receiver is up.
    bench::sender_options o = sender_options_from(vm, packet);
    o.rate_gbps = rate_gbps;
    o.destination = "127.0.0.1:" + std::to_string(port);
    bench::forked_sender sender(o);

    recv::stream_config config;
    config.set_max_heap_size(2 * heap_size);
    recv::udp_config udp;
    udp.set_endpoints("127.0.0.1:" + std::to_string(port)).set_buffer_size(buffer);
    recv::stream stream(config);
    std::size_t granted = 0;
    {
        bench::rmem_max_raise raise(buffer);
        granted = stream.emplace_reader<recv::udp_reader>(udp).get_granted_buffer_size();
        if (announce)
            std::cout << "  " << bench::describe_receive_buffer(buffer, raise, granted)
                      << std::endl;
    }

    // The consumer: takes complete heaps as a block's work() would, without copying.
    std::atomic<std::uint64_t> received{ 0 };
    std::atomic<bool> done{ false };
    std::thread consumer([&] {
        recv::heap h;
        while (!done.load()) {
            if (stream.pop(h, std::chrono::milliseconds(20)) ==
                recv::stream::pop_result::heap) {
                received += h.is_complete();
                h = recv::heap();
            }
        }
        while (stream.try_pop(h))
            received += h.is_complete();
    });

    // The receive side's CPU: the reader and consumer threads, and this one waiting.
    const bench::cpu_times before = bench::cpu_times::of_process();
    bench::sender_report sent;
    try {
        sender.start();
        sent = sender.wait();
    } catch (...) {
        stream.stop();
        done = true;
        consumer.join();
        throw;
    }

    // Let the reader finish what is queued: until the heap count stops moving.
    std::uint64_t last = ~std::uint64_t(0);
    for (int i = 0; i < 30; i++) {
        const std::uint64_t now = stream.get_stats()[recv_stat::heaps];
        if (now == last)
            break;
        last = now;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const bench::cpu_times used = bench::cpu_times::of_process() - before;
    stream.stop();
    done = true;
    consumer.join();

    const recv_stats s = stream.get_stats();
    bench::trial_result r;
    r.target_gbps = rate_gbps;
    r.achieved_gbps = sent.achieved_gbps;
    r.heaps_sent = sent.result.data_heaps;
    r.heaps_received = received.load();
    r.packets_sent = sent.stats[send_stat::packets];
    r.packets_received = s[recv_stat::packets];
    r.receiver_cpu = bench::cpu_per_gib::of(used, r.heaps_received * heap_size);
    for (recv_stat st : { recv_stat::packets_dropped_socket_overflow,
                          recv_stat::incomplete_heaps_evicted,
                          recv_stat::incomplete_heaps_flushed,
                          recv_stat::heaps_dropped_queue_full,
                          recv_stat::packets_late })
        r.drops.emplace_back(stat_name(st), s[st]);
    return r;
}

int run_recv(const po::variables_map& vm, bench::csv_writer& csv)
{
    std::cout << "recv: recv::stream + udp_reader on 127.0.0.1, no GNU Radio; "
              << vm["heap-size"].as<std::size_t>() << "-byte heaps, "
              << vm["seconds"].as<double>()
              << " s per run, sender in a child process (CPU figures: this process's "
                 "user and sys time from the sender's start until the receiver has "
                 "drained, per GiB of payload of the complete heaps received); "
              << bench::load_average() << "\n";
    return bench::report_lossless_rates(
        vm,
        "recv",
        [&](std::size_t packet, double rate, bool first) {
            return recv_trial(vm, packet, rate, first);
        },
        csv);
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
        ("repeat", po::value<int>()->default_value(11), "mem: runs per packet size (the median is reported)")
        ("threads", po::value<std::size_t>()->default_value(1), "mem --continuous: reader threads placing into one recv::stream, one substream each, timed beside one thread placing them all")
        ("continuous", "mem: timestamped heaps placed by chunk_assembler into a window of positions (continuous mode) instead of assembled; loopback: also the source in continuous mode, fed timestamped heaps, beside heaps mode")
        ("seconds", po::value<double>()->default_value(3.0), "send, recv, loopback, sink: seconds per run")
        ("runs", po::value<int>()->default_value(3), "send, sink: runs per packet size; recv, loopback: consecutive lossless runs a rate needs")
        ("rates", po::value<std::string>()->default_value("2,4,6,8,10,12,14,16"), "recv, loopback: rates to try, Gb/s, ascending until heaps are lost (one rate with --refine 0: that rate alone)")
        ("refine", po::value<int>()->default_value(2), "recv, loopback: bisection steps between the last lossless and the first lossy rate")
        ("buffer", po::value<std::size_t>()->default_value(recv::udp_config::default_buffer_size), "recv, loopback: socket receive buffer (bytes; as root the bench lifts net.core.rmem_max for it)")
        ("burst", po::value<std::size_t>()->default_value(65536), "send, recv, loopback: sender burst (bytes)")
        ("max-heap-size", po::value<std::size_t>()->default_value(2 << 20), "loopback: the source's max_heap_size (its output buffer holds two)")
        ("queue-heaps", po::value<std::size_t>()->default_value(0), "loopback: the source's queue_heaps (0: its default)")
        ("source", po::value<std::string>()->default_value("null"), "sink: what feeds the sink: null (blocks.null_source), vector (blocks.vector_source, repeating) or none (writes nothing)")
        ("dest", po::value<std::string>(), "send: destination HOST:PORT (default: a discard socket on 127.0.0.1)")
        ("csv", po::value<std::string>(), "every mode: append the figures to FILE as rows bench,impl,packet_bytes,offered_gbps,trial,metric,value (header only in a new or empty file)");
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
    const std::string mode = vm["mode"].as<std::string>();
    try {
        if (vm.count("help")) {
            std::cout << "usage: spead_bench [mem|send|recv|loopback|sink] [options]\n"
                      << options;
            return 0;
        }
        if (mode != "mem" && mode != "send" && mode != "recv" && mode != "loopback" &&
            mode != "sink") {
            std::cerr << "spead_bench: unknown mode '" << mode
                      << "'; use mem, send, recv, loopback or sink\n";
            return 2;
        }
        bench::csv_writer csv;
        if (vm.count("csv"))
            csv = bench::csv_writer(vm["csv"].as<std::string>());
        if (mode == "mem")
            return run_mem(vm, csv);
        if (mode == "send")
            return run_send(vm, csv);
        if (mode == "recv")
            return run_recv(vm, csv);
        if (mode == "loopback")
            return bench::run_loopback(vm, csv);
        return bench::run_sink(vm, csv);
    } catch (const std::invalid_argument& e) {
        std::cerr << "spead_bench: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "spead_bench: " << e.what() << "\n";
        return 1;
    }
}
