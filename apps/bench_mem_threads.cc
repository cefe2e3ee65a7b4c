/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_bench mem --continuous --threads N: for n = 2..N, n substreams placed into one
// continuous recv::stream by one reader thread, then by n, beside memcpy on one thread
// and on n: placement's share of memcpy's gain. Each run also prints where the threads'
// time went in the steady state (CPU per GiB, context switches, page faults, waits for
// the slowest reader), figures that stay valid on a busy machine.

#include "bench_modes.h"
#include "bench_packets.h"
#include "transport/mem/mem_reader.h"
#include <gnuradio/spead/recv_stream.h>
#include <sys/resource.h>
#include <time.h>
#include <algorithm>
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

/*! What the calling thread has used so far (getrusage(RUSAGE_THREAD), valid however
 * busy the machine is): CPU seconds, context switches and page faults. */
struct thread_use {
    double cpu = 0;
    std::uint64_t voluntary = 0, involuntary = 0, faults = 0;

    static thread_use now()
    {
        thread_use out;
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        out.cpu = double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
        rusage u{};
        getrusage(RUSAGE_THREAD, &u);
        out.voluntary = std::uint64_t(u.ru_nvcsw);
        out.involuntary = std::uint64_t(u.ru_nivcsw);
        out.faults = std::uint64_t(u.ru_minflt + u.ru_majflt);
        return out;
    }
    thread_use& operator+=(const thread_use& o)
    {
        cpu += o.cpu;
        voluntary += o.voluntary;
        involuntary += o.involuntary;
        faults += o.faults;
        return *this;
    }
    thread_use operator-(const thread_use& o) const
    {
        thread_use out = *this;
        out.cpu -= o.cpu;
        out.voluntary -= o.voluntary;
        out.involuntary -= o.involuntary;
        out.faults -= o.faults;
        return out;
    }
};

/*! Heaps each reader of mem --threads has handed over; a reader keeps within
 * max_lead heaps of the slowest, as a network paces its receive threads. Each reader
 * also notes what its thread used from go to its last heap, and how long it waited
 * for the slowest. */
struct reader_pace {
    explicit reader_pace(std::size_t readers)
        : done(readers),
          start(readers),
          used(readers),
          pace_waits(readers, 0),
          pace_seconds(readers, 0),
          pace_cpu(readers, 0),
          pace_switches(readers, 0)
    {
    }
    static constexpr std::uint64_t max_lead = 4; //!< inside the window of 8
    std::vector<std::atomic<std::uint64_t>> done;
    std::vector<thread_use> start, used;      //!< per reader, written by it alone
    std::vector<std::uint64_t> pace_waits;    //!< steps that waited for the slowest
    std::vector<double> pace_seconds;         //!< wall time those waits took
    std::vector<double> pace_cpu;             //!< CPU time those waits took
    std::vector<std::uint64_t> pace_switches; //!< voluntary switches in those waits
    std::uint64_t slowest() const
    {
        std::uint64_t out = ~std::uint64_t(0);
        for (const auto& d : done)
            out = std::min(out, d.load());
        return out;
    }
};

/*! How reader \p index of mem --threads hands its \p heaps positions of \p per_heap
 * packets to the stream: in batches as a socket reader would, as fast as the stream
 * takes them and no faster than its consumer returns chunks (recv::mem_reader's
 * defaults), once \p go is set, within max_lead heaps of the slowest reader; its use
 * is noted from step \p warm (the steady state) on. */
recv::mem_reader_config paced(reader_pace& pace,
                              std::size_t index,
                              const std::atomic<bool>& go,
                              std::size_t per_heap,
                              std::size_t heaps,
                              std::size_t warm)
{
    recv::mem_reader_config c;
    c.packets_per_step = per_heap;
    c.before_step = [&pace, &go, index, heaps, warm](std::size_t done,
                                                     const recv::mem_reader& r) {
        pace.done[index].store(done);
        if (done == heaps) {
            pace.used[index] = thread_use::now() - pace.start[index];
            return true;
        }
        while (!go.load() && !r.stopping())
            std::this_thread::yield();
        if (done == warm)
            pace.start[index] = thread_use::now();
        if (done > pace.slowest() + reader_pace::max_lead) {
            const auto since = clock_type::now();
            const thread_use before = thread_use::now();
            while (done > pace.slowest() + reader_pace::max_lead && !r.stopping())
                std::this_thread::yield();
            if (done >= warm) { // counted in the steady state, like the rest
                pace.pace_waits[index]++;
                pace.pace_seconds[index] +=
                    std::chrono::duration<double>(clock_type::now() - since).count();
                const thread_use waited = thread_use::now() - before;
                pace.pace_cpu[index] += waited.cpu;
                pace.pace_switches[index] += waited.voluntary;
            }
        }
        return !r.stopping();
    };
    return c;
}

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
    double seconds = 0;              //!< steady state: after the warm-up positions
    std::uint64_t steady_bytes = 0;  //!< payload placed in those seconds
    std::uint64_t complete = 0;      //!< (position, substream) complete
    std::uint64_t lost = 0;          //!< positions lost (the consumer fell behind)
    std::uint64_t chunks = 0;        //!< entries the consumer popped
    thread_use readers;              //!< the reader threads together, steady state
    thread_use consumer;             //!< this thread, steady state
    std::uint64_t pace_waits = 0;    //!< reader steps that waited for the slowest
    double pace_seconds = 0;         //!< their wall time, all readers together
    double pace_cpu = 0;             //!< their CPU time (yield spins; in readers.cpu)
    std::uint64_t pace_switches = 0; //!< voluntary switches in them (in readers)
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
    c.timestamp_item = bench_timestamp_item;
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
    // The stream allocates its chunks on first need (page faults); the figure is the
    // steady state after the first chunks any run could allocate have gone round.
    const std::size_t warm_positions = c.window_heaps + 1 + c.queue_positions;
    std::atomic<bool> go{ false };
    reader_pace pace(threads);
    for (std::size_t t = 0; t < threads; t++)
        s.emplace_reader<recv::mem_reader>(
            std::move(lists[t]),
            paced(pace, t, go, per_heap * (substreams / threads), heaps, warm_positions));

    threaded_run out;
    if (heaps <= 2 * warm_positions)
        throw std::invalid_argument("--total-bytes: " + std::to_string(heaps) +
                                    " heaps per substream; mem --threads needs more "
                                    "than " +
                                    std::to_string(2 * warm_positions));
    std::uint64_t positions = 0;
    auto start = clock_type::now();
    thread_use consumer_start;
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
        out.chunks++;
        if (positions < warm_positions && positions + e.positions >= warm_positions) {
            start = clock_type::now();
            consumer_start = thread_use::now();
        }
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
    out.consumer = thread_use::now() - consumer_start;
    s.stop(); // the readers have noted their use
    for (std::size_t t = 0; t < threads; t++) {
        out.readers += pace.used[t];
        out.pace_waits += pace.pace_waits[t];
        out.pace_seconds += pace.pace_seconds[t];
        out.pace_cpu += pace.pace_cpu[t];
        out.pace_switches += pace.pace_switches[t];
    }
    out.steady_bytes = (positions - warm_positions) * substreams * heap_size;
    out.stats = s.get_stats();
    if (s.has_failed())
        throw std::runtime_error("mem --threads: the stream failed: " + s.get_failure());
    return out;
}

/*! Where a run's threads spent their time in the steady state, per GiB placed: the
 * readers' and the consumer's CPU seconds, context switches, page faults, chunks popped
 * and the waits for the slowest reader (figures that stay valid on a busy machine). */
void print_use(std::size_t threads, const threaded_run& run, double gib)
{
    std::cout << "    use, " << threads << " thread(s): readers " << run.readers.cpu / gib
              << " CPU s/GiB (" << run.readers.voluntary << " voluntary, "
              << run.readers.involuntary << " involuntary switches, "
              << run.readers.faults << " page faults); consumer "
              << run.consumer.cpu / gib << " CPU s/GiB (" << run.consumer.voluntary
              << " voluntary, " << run.consumer.involuntary << " involuntary, "
              << run.chunks << " chunks); " << run.pace_waits << " pace waits, "
              << run.pace_seconds << " s (" << run.pace_cpu / gib << " CPU s/GiB, "
              << run.pace_switches << " voluntary switches); wall " << run.seconds
              << " s\n";
}

/*! The ceiling of mem --threads: each set's payloads copied as memcpy_seconds() does,
 * one thread per set, started together; the seconds until the last is done. */
double parallel_memcpy_seconds(const std::vector<packet_set>& sets,
                               std::size_t heap_size,
                               double& cpu)
{
    std::vector<double> cpus(sets.size());
    std::atomic<bool> go{ false };
    std::atomic<std::size_t> ready{ 0 };
    std::vector<double> seconds(sets.size());
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < sets.size(); t++)
        threads.emplace_back([&, t] {
            ready++;
            while (!go.load())
                std::this_thread::yield();
            const double before = thread_use::now().cpu;
            seconds[t] = memcpy_seconds(sets[t], heap_size);
            cpus[t] = thread_use::now().cpu - before;
        });
    while (ready.load() != sets.size())
        std::this_thread::yield();
    const auto start = clock_type::now();
    go.store(true);
    for (auto& t : threads)
        t.join();
    const std::chrono::duration<double> elapsed = clock_type::now() - start;
    cpu = 0;
    for (double c : cpus)
        cpu += c;
    return elapsed.count();
}

} // namespace

/*! mem --continuous --threads N, for each n = 2 .. N: n substreams placed into one
 * stream by one reader thread, then by n, on the same packets; the aggregate figure of
 * each and their ratio (what the extra cores add), beside the same ratio for plain
 * memcpy in the same run (what the machine's memory lets them add), and the share of
 * memcpy's gain placement keeps: ratio / memcpy's ratio (docs/performance.md). */
int run_mem_threads(const bench_options& o, csv_writer& csv)
{
    const std::size_t heap_size = o.heap_size;
    const std::uint64_t total = o.total_bytes;
    const int repeat = o.repeat;
    std::cout << "mem --threads " << o.threads << ": recv::stream (continuous), n = 2.."
              << o.threads
              << " substreams, fed by 1 reader thread and by n (one substream each); "
                 "share = (n threads / 1) / (memcpy on n threads / 1), in the same run; "
              << load_average() << "\n";
    struct figure {
        std::size_t threads, packet;
        double ratio, copy_ratio, share;
    };
    std::vector<figure> figures;
    for (std::size_t threads = 2; threads <= o.threads; threads++)
        for (std::size_t packet_size : o.packets) {
            std::vector<packet_set> sets;
            for (std::size_t sub = 0; sub < threads; sub++) {
                heap_numbering numbering;
                numbering.timestamped = true;
                numbering.substream = sub;
                numbering.substreams = threads;
                sets.push_back(
                    make_packets(heap_size, packet_size, total / threads, numbering));
            }
            std::cout << "mem: " << threads << " threads, "
                      << sets[0].packets.size() * threads << " packets of " << packet_size
                      << " bytes, " << sets[0].heaps << " heaps of " << heap_size
                      << " bytes per substream\n";
            std::vector<double> one, many, ratios, copy_ratios, shares;
            for (int r = 0; r < repeat; r++) {
                // What the machine gives more threads: memcpy alone, 1 thread and n.
                double copy_one = 0, copy_many_cpu = 0;
                const double copy_one_cpu = thread_use::now().cpu;
                for (const auto& set : sets)
                    copy_one += memcpy_seconds(set, heap_size);
                const double copy_one_used = thread_use::now().cpu - copy_one_cpu;
                const double copy_many =
                    parallel_memcpy_seconds(sets, heap_size, copy_many_cpu);
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
                shares.push_back(ratios.back() / copy_ratios.back());
                std::cout << "  run " << r + 1 << ": 1 thread " << one.back() << " Gb/s, "
                          << threads << " threads " << many.back() << " Gb/s, ratio "
                          << ratios.back() << "; memcpy alone: ratio "
                          << copy_ratios.back() << "; share " << shares.back() << "\n";
                for (const threaded_run* run : { &a, &b })
                    print_use(run == &a ? 1 : threads,
                              *run,
                              double(run->steady_bytes) / double(1 << 30));
                const double gib =
                    double(sets[0].heaps * threads * heap_size) / double(1 << 30);
                std::cout << "    use, memcpy: " << copy_one_used / gib
                          << " CPU s/GiB on 1 thread, " << copy_many_cpu / gib << " on "
                          << threads << "; CPU per GiB, " << threads
                          << " threads / 1: placement "
                          << (b.readers.cpu - b.pace_cpu) / (a.readers.cpu - a.pace_cpu)
                          << " (readers, without pace waits), memcpy "
                          << copy_many_cpu / copy_one_used << "\n";
                csv.rows({ "mem_threads_" + std::to_string(threads),
                           packet_size,
                           0.0,
                           std::to_string(r + 1) },
                         { { "gbps", many.back() },
                           { "gbps_1_thread", one.back() },
                           { "ratio_to_1_thread", ratios.back() },
                           { "memcpy_ratio_to_1_thread", copy_ratios.back() },
                           { "share_of_memcpy_gain", shares.back() } });
            }
            csv.rows(
                { "mem_threads_" + std::to_string(threads), packet_size, 0.0, "median" },
                { { "gbps", median(many) },
                  { "gbps_1_thread", median(one) },
                  { "ratio_to_1_thread", median(ratios) },
                  { "memcpy_ratio_to_1_thread", median(copy_ratios) },
                  { "share_of_memcpy_gain", median(shares) } });
            std::cout << "packet " << packet_size << ", " << threads
                      << " threads: 1 thread " << median(one) << " Gb/s, " << threads
                      << " threads " << median(many) << " Gb/s, ratio " << median(ratios)
                      << "; memcpy alone: ratio " << median(copy_ratios) << "; share "
                      << median(shares) << " (median of " << repeat << ")\n";
            figures.push_back({ threads,
                                packet_size,
                                median(ratios),
                                median(copy_ratios),
                                median(shares) });
        }
    for (const figure& f : figures) {
        const auto named = [&f](const char* what) {
            return "mem_threads_" + std::to_string(f.threads) + "_" + what + "_" +
                   std::to_string(f.packet);
        };
        std::cout << named("ratio") << ": " << f.ratio << "\n"
                  << named("memcpy_ratio") << ": " << f.copy_ratio << "\n"
                  << named("share") << ": " << f.share << "\n";
    }
    return 0;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
