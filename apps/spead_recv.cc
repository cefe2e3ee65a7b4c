/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_recv: receive SPEAD heaps from UDP endpoints or capture files and print them
// (cnt, items in wire order, immediates in hex, decoded descriptors), then the stream
// statistics as "name: value" lines. Flags follow spead2_recv where the meaning is the
// same, so users can switch between the two (--ibv receives the UDP endpoints through an
// ibverbs raw-packet queue pair on the interface given with --bind, as spead2_recv
// does). With --verify, items 0x1000... are checked against the payload pattern
// spead_send --verify writes (apps/payload_pattern.h). With --timestamp-item, data heaps
// are placed by timestamp as spead.source's continuous mode places them, and a line per
// chunk of positions is printed instead (--first-substream takes a host's share).

#include "cmdline_options.h"
#include "command_line.h"
#include "payload_pattern.h"
#include "stream_watch.h"
#include "transport/split_endpoints.h"
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/recv_pcap.h>
#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/recv_tcp.h>
#include <gnuradio/spead/recv_udp.h>
#include <gnuradio/spead/recv_udp_ibv.h>
#include <arpa/inet.h>
#include <boost/program_options.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace po = boost::program_options;
using namespace gr::spead;
using apps::with_flag;

namespace {

/*! A source is a UDP endpoint when it looks like `port` or `host:port`; else a file. */
bool is_endpoint(const std::string& source)
{
    const auto colon = source.rfind(':');
    return apps::is_udp_port(colon == std::string::npos ? source
                                                        : source.substr(colon + 1));
}

/*! An IPv4 address or range (ADDRESS+N) without a port, which is no file here: a
 * source whose port was forgotten. */
bool is_address_without_port(const std::string& source)
{
    if (std::filesystem::exists(source))
        return false;
    const std::string address = source.substr(0, source.find('+'));
    in_addr parsed{};
    return inet_pton(AF_INET, address.c_str(), &parsed) == 1;
}

std::string hex(std::uint64_t v)
{
    std::ostringstream out;
    out << "0x" << std::hex << v;
    return out.str();
}

std::string shape_text(const std::vector<std::int64_t>& shape)
{
    std::ostringstream out;
    out << "(";
    for (std::size_t i = 0; i < shape.size(); i++)
        out << (i ? ", " : "")
            << (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
    out << (shape.size() == 1 ? ",)" : ")");
    return out.str();
}

void print_heap(const recv::heap& h, bool descriptors, bool pyspead)
{
    std::cout << "heap " << h.cnt() << ": " << h.size() << " bytes in " << h.packets()
              << (h.packets() == 1 ? " packet" : " packets") << ", "
              << h.get_flavour().name();
    if (!h.is_complete())
        std::cout << ", INCOMPLETE (" << h.received_bytes() << " bytes received)";
    std::cout << "\n";
    for (const recv::item& it : h.items()) {
        std::cout << "  " << hex(it.id) << " [" << it.length << " bytes]";
        if (it.is_immediate)
            std::cout << " = " << hex(it.immediate_value);
        if (it.id == item_id::descriptor)
            std::cout << " descriptor";
        else if (it.id == item_id::stream_ctrl)
            std::cout << " stream control";
        std::cout << "\n";
    }
    for (const descriptor& d :
         descriptors ? h.descriptors(pyspead) : std::vector<descriptor>()) {
        std::cout << "  descriptor " << hex(d.id) << " '" << d.name << "'\n"
                  << "    description: " << d.description << "\n"
                  << "    format:      [";
        for (std::size_t i = 0; i < d.format.size(); i++)
            std::cout << (i ? ", " : "") << "('" << d.format[i].first << "', "
                      << d.format[i].second << ")";
        std::cout << "]\n"
                  << "    shape:       " << shape_text(d.shape) << "\n"
                  << "    dtype:       " << d.numpy_header << "\n";
    }
}

/*! Counts what `--verify` finds: items of spead_send's pattern that differ from it. */
struct verifier {
    /*! Mismatching heaps reported one by one on stderr; the rest are only counted. */
    static constexpr std::uint64_t max_reported = 10;

    std::uint64_t heaps = 0;            //!< heaps with at least one pattern item
    std::uint64_t heaps_mismatched = 0; //!< of those, heaps with a differing byte
    std::uint64_t bytes_mismatched = 0; //!< bytes that differ from the pattern

    void check(const recv::heap& h)
    {
        bool any = false;
        std::uint64_t bad = 0;
        for (const recv::item& it : h.items()) {
            if (it.is_immediate || it.id < apps::first_item_id ||
                it.id >= apps::first_item_id + apps::max_pattern_items)
                continue;
            any = true;
            const std::size_t n = apps::count_pattern_mismatches(
                it.data, it.length, h.cnt(), it.id - apps::first_item_id);
            if (n && heaps_mismatched < max_reported)
                std::cerr << "spead_recv: heap " << h.cnt() << ": item " << hex(it.id)
                          << ": " << n << " of " << it.length
                          << " bytes differ from the pattern\n";
            bad += n;
        }
        heaps += any;
        heaps_mismatched += bad > 0;
        bytes_mismatched += bad;
    }

    void print() const
    {
        std::cout << "verify_heaps: " << heaps << "\n"
                  << "verify_heaps_mismatched: " << heaps_mismatched << "\n"
                  << "verify_bytes_mismatched: " << bytes_mismatched << "\n";
    }
};

void print_stats_help()
{
    for (std::size_t i = 0; i < recv_stats::size; i++) {
        const auto s = static_cast<recv_stat>(i);
        std::cout << std::left << std::setw(36) << stat_name(s) << stat_description(s)
                  << "\n";
    }
}

/*! A stream receiving \p sources (files and endpoints), each endpoint list split among
 * the receive threads. */
std::unique_ptr<recv::stream> make_stream(const apps::receiver_options& o,
                                          const std::vector<std::string>& sources)
{
    std::vector<std::string> files;
    std::string joined;
    for (const std::string& source : sources) {
        if (!is_endpoint(source))
            files.push_back(source);
        else
            joined += (joined.empty() ? "" : ",") +
                      (source.find(':') == std::string::npos ? ":" + source : source);
    }
    auto stream = std::make_unique<recv::stream>(o.stream_config());
    for (const std::string& file : files)
        stream->emplace_reader<recv::pcap_reader>(file);
    if (joined.empty())
        return stream;
    if (o.tcp || o.rdma) {
        // One listener per SOURCE, each for one sender (as spead2_recv --tcp).
        std::size_t begin = 0;
        while (begin <= joined.size()) {
            const auto comma = std::min(joined.find(',', begin), joined.size());
            const std::string one = joined.substr(begin, comma - begin);
            if (o.rdma)
                stream->emplace_reader<recv::rdma_reader>(o.rdma_config(one));
            else
                stream->emplace_reader<recv::tcp_reader>(o.tcp_config(one));
            begin = comma + 1;
        }
        return stream;
    }
    const auto split = [&o](const auto& whole, bool by_port) {
        std::vector<std::decay_t<decltype(whole)>> out;
        with_flag("--threads",
                  [&] { out = transport::split_endpoints(whole, o.threads, by_port); });
        return out;
    };
    if (o.ibv.ibv) {
        for (const recv::udp_ibv_config& share : split(o.ibv_config(joined), false))
            stream->emplace_reader<recv::udp_ibv_reader>(share);
    } else {
        for (const recv::udp_config& share : split(o.udp_config(joined), true))
            stream->emplace_reader<recv::udp_reader>(share);
    }
    return stream;
}

/*! Continuous mode: one line per chunk (positions, their first timestamp, the heaps
 * there and the zeros) until every stream has ended; control heaps as in heaps mode. */
void take_chunks(const apps::receiver_options& o, std::vector<recv::stream*> live)
{
    while (!apps::interrupted && !live.empty()) {
        for (std::size_t i = 0; i < live.size();) {
            recv::heap h;
            while (live[i]->try_pop(h))
                if (!o.quiet)
                    print_heap(h, o.descriptors, o.pyspead);
            recv::chunk_entry e;
            const auto result = live[i]->pop_chunk(e, std::chrono::milliseconds(100));
            if (result == recv::stream::pop_result::stopped) {
                live.erase(live.begin() + std::ptrdiff_t(i));
                continue;
            }
            if (result == recv::stream::pop_result::heap && !o.quiet) {
                std::size_t complete = 0, missing = 0;
                for (std::size_t p = 0; e.data && p < e.positions; p++)
                    for (std::size_t s = 0; s < e.data->substreams(); s++) {
                        const auto fill = e.data->fill(p, s);
                        complete += fill == recv::position_fill::complete;
                        missing += fill == recv::position_fill::missing;
                    }
                std::cout << "Positions " << e.first_index << "-"
                          << e.first_index + e.positions - 1;
                if (e.data)
                    std::cout << " from timestamp " << e.data->at(0).timestamp << ": "
                              << complete << " heaps, " << missing << " missing\n";
                else
                    std::cout << ": lost (the consumer fell behind)\n";
            }
            if (e.data)
                live[i]->return_chunk(std::move(e.data));
            i++;
        }
    }
}

int run(const apps::receiver_options& o,
        const apps::watch_options& watched,
        const std::vector<std::string>& sources)
{
    bool any_endpoint = false;
    for (const std::string& source : sources) {
        if (is_address_without_port(source))
            throw po::error("'" + source +
                            "' is neither a UDP endpoint nor a capture file: an address "
                            "needs its port, e.g. " +
                            source + ":7148");
        any_endpoint = any_endpoint || is_endpoint(source);
    }
    if (o.ibv.ibv && !any_endpoint)
        throw po::error("--ibv receives UDP endpoints; give at least one (PORT, "
                        "HOST:PORT or GROUP:PORT)");

    // As spead2_recv: each SOURCE is a stream of its own, which its own stop heap
    // ends, unless --joint makes them one.
    std::vector<std::unique_ptr<recv::stream>> streams;
    if (o.joint)
        streams.push_back(make_stream(o, sources));
    else
        for (const std::string& source : sources)
            streams.push_back(make_stream(o, { source }));

    apps::stop_on_signals();
    verifier checked;
    const std::uint64_t max_heaps = o.heaps;
    std::uint64_t received = 0;
    apps::taken_counts taken; // --progress
    const auto take = [&](const recv::heap& h) {
        received++;
        taken.took(h.size());
        if (!o.quiet)
            print_heap(h, o.descriptors, o.pyspead);
        if (o.verify)
            checked.check(h);
    };
    // Each stream's heaps in their order; the streams take turns.
    std::vector<recv::stream*> live;
    for (const auto& s : streams)
        live.push_back(s.get());
    // --metrics, --progress: until the streams have ended
    std::optional<apps::stream_watch> watch(std::in_place, watched, "spead_recv");
    watch->watch_receivers(live,
                           sources,
                           o.tcp       ? "tcp"
                           : o.rdma    ? "rdma"
                           : o.ibv.ibv ? "ibverbs"
                                       : "udp",
                           o.continuous(),
                           taken);
    if (o.continuous()) {
        take_chunks(o, live);
        live.clear();
    }
    while (!apps::interrupted && !live.empty() &&
           (max_heaps == 0 || received < max_heaps)) {
        bool any = false;
        for (std::size_t i = 0;
             i < live.size() && (max_heaps == 0 || received < max_heaps);) {
            recv::heap h;
            const auto result =
                live[i]->pop(h,
                             live.size() == 1 ? std::chrono::milliseconds(100)
                                              : std::chrono::milliseconds(0));
            if (result == recv::stream::pop_result::stopped) {
                live.erase(live.begin() + std::ptrdiff_t(i));
                continue;
            }
            if (result == recv::stream::pop_result::heap) {
                take(h);
                any = true;
            }
            i++;
        }
        if (!any && live.size() > 1)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    watch.reset();
    recv_stats total;
    bool failed = false;
    for (const auto& s : streams) {
        s->stop();
        total += s->get_stats();
        if (s->has_failed()) {
            // The counters are still right: say why the stream ended early.
            std::cerr << "spead_recv: the receiver failed: " << s->get_failure() << "\n";
            failed = true;
        }
    }
    std::cout << "Received " << received << " heaps\n";
    for (const auto& [name, value] : total.items())
        std::cout << name << ": " << value << "\n";
    if (o.verify)
        checked.print();
    return failed ? 1 : 0;
}

} // namespace

int main(int argc, char** argv)
{
    po::options_description options(
        "spead_recv [options] SOURCE...\n\n"
        "SOURCE is a UDP endpoint (PORT, HOST:PORT, a multicast "
        "GROUP:PORT, or a range GROUP+N:PORT)\nor a capture "
        "file (pcap: Ethernet or Linux cooked); with --tcp, HOST:PORT or PORT to listen "
        "on\nfor one TCP sender.\n\nspead2_recv's flags work the same "
        "way where they exist here; not supported: its memory tuning\n"
        "(--mem-pool, --mem-*, --memcpy-nt, --ring, --substreams).\n\nOptions");
    options.add_options()("help,h", "show this help")(
        "help-stats", "list the statistics with their meaning");
    apps::receiver_options receiver;
    receiver.add_to(options);
    apps::watch_options watch;
    watch.add_to(options);
    std::vector<std::string> sources;
    return apps::exit_status("spead_recv", options, [&] {
        const po::variables_map vm =
            apps::parse_command_line(argc, argv, options, "source", sources);
        if (vm.count("help")) {
            std::cout << options;
            return 0;
        }
        if (vm.count("help-stats")) {
            print_stats_help();
            return 0;
        }
        if (sources.empty())
            throw po::error("give at least one SOURCE (an endpoint or a capture file)");
        receiver.check(vm);
        watch.check();
        return run(receiver, watch, sources);
    });
}
