/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_bench loopback and spead_bench sink: the modes that run GNU Radio flowgraphs.
//
//   loopback: spead.source (udp, 127.0.0.1:PORT) → blocks.null_sink, fed by spead_send's
//             generator in a child process at a set rate. Finds the highest rate with no
//             heap lost in --runs consecutive runs, per packet size, and says the
//             receive side's CPU time (this process's) per GiB received. With
//             --continuous, the same again per packet size with the source in continuous
//             mode, fed the same heaps with a timestamp each: lossless there means every
//             sample out and none zero-filled.
//   sink:     a source → spead.sink (udp to a socket on 127.0.0.1 that never reads),
//             as fast as it goes; prints Gb/s of SPEAD packets per packet size.

#include "bench_modes.h"
#include "bench_sockets.h"
#include "bench_trials.h"
#include "mapping/sink_plan.h" // sink_send_slots
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/null_source.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/sink.h>
#include <gnuradio/spead/source.h>
#include <gnuradio/sync_block.h>
#include <gnuradio/top_block.h>
#include <boost/program_options.hpp>
#include <chrono>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace po = boost::program_options;
namespace bench = gr::spead::apps::bench;
using namespace gr::spead;

namespace {

/*! A source that hands on its output buffer as it is, writing nothing: what is left
 * is the sink's own cost. */
class untouched_source : public gr::sync_block
{
public:
    explicit untouched_source(std::size_t itemsize)
        : gr::sync_block("untouched_source",
                         gr::io_signature::make(0, 0, 0),
                         gr::io_signature::make(1, 1, static_cast<int>(itemsize)))
    {
    }
    int work(int noutput_items, gr_vector_const_void_star&, gr_vector_void_star&) override
    {
        return noutput_items;
    }
};

/*! Waits until \p count stops moving (the pipeline has drained), at most 3 s. */
template <typename F>
void settle(F count)
{
    std::uint64_t last = count();
    for (int i = 0; i < 30; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const std::uint64_t now = count();
        if (now == last)
            return;
        last = now;
    }
}

/*! What a loopback run measured: the sender's report, and this process's CPU time
 * from the sender's start until the flowgraph had drained. */
struct loopback_run {
    bench::sender_report sent;
    bench::cpu_times receive_cpu;
};

/*! Starts \p tb, has \p sender send, waits until \p count stops moving, stops \p tb. */
template <typename F>
loopback_run run_while_sending(gr::top_block& tb, bench::forked_sender& sender, F count)
{
    tb.start();
    loopback_run run;
    const bench::cpu_times before = bench::cpu_times::of_process();
    try {
        sender.start();
        run.sent = sender.wait();
    } catch (...) {
        tb.stop();
        tb.wait();
        throw;
    }
    settle(count);
    run.receive_cpu = bench::cpu_times::of_process() - before;
    tb.stop();
    tb.wait();
    return run;
}

/*! The source of a loopback trial, listening on \p endpoint: heaps mode (packet_len
 * tags) or continuous mode (placed by bench_timestamp_item); with \p announce, says
 * what receive buffer the kernel granted. */
source::sptr make_loopback_source(const bench::bench_options& o,
                                  const std::string& endpoint,
                                  bool continuous,
                                  bool announce)
{
    const std::size_t buffer = o.buffer;
    bench::rmem_max_raise raise(buffer);
    source_config config;
    config.set("endpoints", endpoint)
        .set("buffer_size", buffer)
        .set("max_packet_size", recv::udp_config::default_max_size)
        .set("item_type", "int8")
        .set("len_tag_key", continuous ? "" : "packet_len")
        .set("max_heap_size", o.max_heap_size)
        .set("timestamp_item", continuous ? bench::bench_timestamp_item : 0)
        .set("byte_order", "as-is")
        .set("stop_on_stop_heap", continuous)
        .set("queue_heaps", o.queue_heaps)
        .set("output_mode", continuous ? "continuous" : "heaps");
    source::sptr src = source::make(config);
    if (announce) // the kernel grants min(asked, rmem_max) (Linux)
        std::cout << "  "
                  << bench::describe_receive_buffer(
                         buffer, raise, std::min(buffer, raise.effective()))
                  << std::endl;
    return src;
}

/*! A loopback trial's flowgraph, spead.source on a free port of 127.0.0.1 ->
 * blocks.null_sink, and its sender: timestamped heaps and a stop heap for the source in
 * continuous mode. */
struct loopback_graph {
    loopback_graph(const bench::bench_options& o,
                   std::size_t packet,
                   double rate,
                   bool continuous,
                   bool announce)
        : endpoint("127.0.0.1:" + std::to_string(bench::free_udp_port())),
          // Forked before the source exists: the source starts its reader on make().
          sender(sender_options(o, packet, rate, continuous)),
          tb(gr::make_top_block(continuous ? "spead_bench loopback --continuous"
                                           : "spead_bench loopback")),
          src(make_loopback_source(o, endpoint, continuous, announce)),
          null(gr::blocks::null_sink::make(1))
    {
        tb->connect(src, 0, null, 0);
    }

    bench::sender_options sender_options(const bench::bench_options& o,
                                         std::size_t packet,
                                         double rate,
                                         bool continuous) const
    {
        bench::sender_options s = o.sender(packet, rate);
        s.destination = endpoint;
        if (continuous)
            s.timestamp_item = bench::bench_timestamp_item;
        return s;
    }

    const std::string endpoint;
    bench::forked_sender sender;
    const gr::top_block_sptr tb;
    const source::sptr src;
    const gr::blocks::null_sink::sptr null;
};

} // namespace

bench::trial_result bench::loopback_trial(const bench_options& o,
                                          std::size_t packet,
                                          double rate,
                                          bool announce)
{
    loopback_graph g(o, packet, rate, false, announce);
    const auto [sent, used] = run_while_sending(
        *g.tb, g.sender, [&g] { return g.src->stats().at("heaps_output"); });
    const auto s = g.src->stats();

    bench::trial_result r = bench::trial_sent(rate, sent);
    r.heaps_received = s.at("heaps_output");
    r.packets_received = s.at("packets");
    r.receiver_cpu = bench::cpu_per_gib::of(used, r.heaps_received * o.heap_size);
    for (const char* name : { "packets_dropped_socket_overflow",
                              "incomplete_heaps_evicted",
                              "incomplete_heaps_flushed",
                              "heaps_dropped_queue_full",
                              "heaps_dropped_too_large_for_output",
                              "packets_late" })
        r.drops.emplace_back(name, s.at(name));
    return r;
}

namespace {

/*! Heaps the buffer before the sink holds: what spead.sink's log advises for speed,
 * as many as it has in flight (docs/usage.md, "Sending fast"). */
constexpr std::size_t sink_buffer_heaps = sink_send_slots;

/*! loopback_trial() with the source in continuous mode: the same heaps, timestamped
 * (int8 items, so one timestamp per byte), and a stop heap at the end that makes the
 * source output the last positions and end the flowgraph. A run passes when every
 * heap sent is a placed heap and every sample is output, none zero-filled. */
bench::trial_result continuous_loopback_trial(const bench::bench_options& o,
                                              std::size_t packet,
                                              double rate,
                                              bool announce)
{
    const std::size_t heap_size = o.heap_size;
    loopback_graph g(o, packet, rate, true, announce);
    // The stop heap ends the flowgraph once the last positions are out; if it was
    // lost, the count stops moving and the run ends all the same.
    const auto [sent, used] = run_while_sending(
        *g.tb, g.sender, [&g] { return g.src->stats().at("positions_released"); });
    const auto s = g.src->stats();
    const std::uint64_t items_out = g.null->nitems_read(0);

    bench::trial_result r = bench::trial_sent(rate, sent);
    r.packets_received = s.at("packets");
    // Received = heaps placed whole; a run whose output is not exactly the samples
    // sent (a position short, a resync repeating some) counts as losing one at least.
    r.heaps_received = s.at("heaps");
    const bool every_sample_out = items_out == r.heaps_sent * heap_size &&
                                  s.at("items_zero_filled") == 0 &&
                                  s.at("timestamp_resyncs") == 0;
    if (!every_sample_out && r.heaps_sent > 0)
        r.heaps_received = std::min(r.heaps_received, r.heaps_sent - 1);
    r.receiver_cpu = bench::cpu_per_gib::of(used, r.heaps_received * heap_size);
    if (items_out != r.heaps_sent * heap_size)
        r.drops.emplace_back("samples_short",
                             r.heaps_sent * heap_size > items_out
                                 ? r.heaps_sent * heap_size - items_out
                                 : 0);
    for (const char* name : { "packets_dropped_socket_overflow",
                              "heaps_missing",
                              "items_zero_filled",
                              "incomplete_heaps_evicted",
                              "incomplete_heaps_flushed",
                              "heaps_dropped_queue_full",
                              "heaps_late",
                              "timestamp_resyncs",
                              "packets_late" })
        r.drops.emplace_back(name, s.at(name));
    return r;
}

} // namespace

bench::sink_figures bench::sink_run(const bench_options& o,
                                    const std::string& source_kind,
                                    std::size_t packet,
                                    int run,
                                    csv_writer& csv)
{
    const std::size_t heap_size = o.heap_size;
    bench::discard_socket discard;

    auto tb = gr::make_top_block("spead_bench sink");
    gr::basic_block_sptr upstream;
    if (source_kind == "null") {
        upstream = gr::blocks::null_source::make(1);
    } else if (source_kind == "vector") {
        upstream = gr::blocks::vector_source_b::make(
            std::vector<unsigned char>(heap_size, 0x5a), true);
    } else if (source_kind == "none") {
        upstream = gnuradio::make_block_sptr<untouched_source>(1);
    } else {
        throw std::invalid_argument("--source: '" + source_kind +
                                    "' is not a source; use null, vector or none");
    }
    // Eight heaps, as the sink advises for speed: it sends heaps from this buffer in
    // place and consumes each once sent, so the upstream writes the next ones while
    // the earlier are sent (two would do; eight, as many as the sink has in flight,
    // keep its writer busy).
    std::dynamic_pointer_cast<gr::block>(upstream)->set_min_output_buffer(
        static_cast<long>(sink_buffer_heaps * heap_size));
    auto snk = sink::make(
        sink_config({ { "endpoints", "127.0.0.1:" + std::to_string(discard.port()) },
                      { "max_packet_size", packet },
                      { "item_type", "int8" },
                      { "len_tag_key", "" },
                      { "heap_items", heap_size },
                      { "send_stop_heap", false } }));
    tb->connect(upstream, 0, snk, 0);
    tb->start();
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // warm up
    const auto t0 = std::chrono::steady_clock::now();
    const auto before = snk->stats();
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    const auto after = snk->stats();
    const std::uint64_t b0 = before.at("bytes"), b1 = after.at("bytes");
    const std::uint64_t p0 = before.at("packets"), p1 = after.at("packets");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    tb->stop();
    tb->wait();
    const double gbps = (b1 - b0) * 8e-9 / seconds;
    std::cout << "  packet " << packet << ", source " << source_kind << ": " << gbps
              << " Gb/s, " << p1 - p0 << " packets in " << seconds << " s (heaps failed "
              << snk->stats().at("heaps_failed") << ", the discard socket dropped "
              << discard.drops() << ")" << std::endl;
    const csv_writer::run row{
        bench_options::sink_figure("sink", source_kind), packet, 0.0, std::to_string(run)
    };
    csv.row(row, "gbps", gbps);
    csv.row(row, "packets_sent", p1 - p0);
    return { gbps, p1 - p0 };
}

int bench::run_loopback(const bench_options& o, csv_writer& csv)
{
    std::cout << "loopback: spead.source (udp, 127.0.0.1) -> blocks.null_sink, "
              << o.heap_size << "-byte heaps from spead_send's "
              << "generator in a child process, " << o.seconds
              << " s per run (CPU figures: this process's, per GiB of payload of the "
                 "heaps received); "
              << bench::load_average() << "\n";
    using namespace std::placeholders;
    const auto heaps_trial = std::bind(loopback_trial, std::cref(o), _1, _2, _3);
    if (!o.continuous)
        return bench::report_lossless_rates(
            o.search, o.packets, "loopback", heaps_trial, csv);

    // Both modes per packet size, one after the other, so that the two figures of a
    // size are taken under the same load.
    std::cout << "loopback --continuous: then the source in continuous mode (int8 "
                 "items, window 64 heaps), the same heaps each with a timestamp "
                 "item, and a stop heap\n";
    const auto continuous_trial =
        std::bind(continuous_loopback_trial, std::cref(o), _1, _2, _3);
    struct figure {
        std::size_t packet;
        bench::search_result heaps_mode;
        bench::search_result continuous_mode;
    };
    std::vector<figure> figures;
    for (std::size_t packet : o.packets) {
        const bench::search_result heaps_mode =
            bench::search_packet(heaps_trial, packet, o.search, "loopback", csv);
        const bench::search_result continuous_mode = bench::search_packet(
            continuous_trial, packet, o.search, "loopback_continuous", csv);
        std::cout << "loopback packet " << packet << ": heaps mode "
                  << bench::describe(heaps_mode) << ", continuous mode "
                  << bench::describe(continuous_mode) << " (highest lossless rates)"
                  << std::endl;
        figures.push_back({ packet, heaps_mode, continuous_mode });
    }
    for (const figure& f : figures)
        std::cout << bench::figure_lines("loopback", f.packet, f.heaps_mode)
                  << bench::figure_lines(
                         "loopback_continuous", f.packet, f.continuous_mode);
    return 0;
}

int bench::run_sink(const bench_options& o, csv_writer& csv)
{
    const int runs = o.runs;
    // (name, Gb/s), e.g. sink_gbps_8972, sink_null_source_gbps_8972
    std::vector<std::pair<std::string, double>> figures;
    std::cout << "sink: each --source -> spead.sink (udp to a socket on 127.0.0.1 that "
                 "never reads), as fast as possible, "
              << o.heap_size << "-byte heaps, " << o.seconds << " s per run; "
              << bench::load_average() << "\n";
    for (std::size_t packet : o.packets) {
        for (const std::string& source : o.sources) {
            std::vector<double> rates;
            for (int run = 1; run <= runs; run++)
                rates.push_back(bench::sink_run(o, source, packet, run, csv).gbps);
            const std::string bench = bench_options::sink_figure("sink", source);
            const double m = bench::median(rates);
            csv.row({ bench, packet, 0.0, "median" }, "gbps", m);
            std::cout << "sink packet " << packet << ", source " << source << ": " << m
                      << " Gb/s (median of " << runs << "); " << bench::load_average()
                      << std::endl;
            figures.emplace_back(bench + "_gbps_" + std::to_string(packet), m);
        }
    }
    for (const auto& [name, gbps] : figures)
        std::cout << name << ": " << gbps << "\n";
    return 0;
}
