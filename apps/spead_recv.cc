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
// spead_send --verify writes (apps/payload_pattern.h).

#include "flag_error.h"
#include "payload_pattern.h"
#include "transport/split_endpoints.h"
#include <gnuradio/spead/item_ids.h>
#include <gnuradio/spead/recv_pcap.h>
#include <gnuradio/spead/recv_stream.h>
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
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace po = boost::program_options;
using namespace gr::spead;
using apps::with_flag;

namespace {

std::atomic<bool> interrupted{ false };

void on_signal(int) { interrupted = true; }

/*! A source is a UDP endpoint when it looks like `port` or `host:port`; else a file. */
bool is_endpoint(const std::string& source)
{
    const auto colon = source.rfind(':');
    const std::string port =
        colon == std::string::npos ? source : source.substr(colon + 1);
    if (port.empty() || port.size() > 5)
        return false;
    for (char c : port)
        if (c < '0' || c > '9')
            return false;
    return true;
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

/*! How the receiver is set up from the command line, for each stream it makes. */
struct receiver_setup {
    recv::stream_config config;
    bool ibv = false;
    std::size_t threads = 1;
    const po::variables_map* vm = nullptr;

    /*! A stream receiving \p sources (files and endpoints), each endpoint list split
     * among the threads. */
    std::unique_ptr<recv::stream> make(const std::vector<std::string>& sources) const
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
        auto stream = std::make_unique<recv::stream>(config);
        for (const std::string& file : files)
            stream->emplace_reader<recv::pcap_reader>(file);
        if (joined.empty())
            return stream;
        if (ibv) {
            for (const recv::udp_ibv_config& share : split(ibv_config(joined), false))
                stream->emplace_reader<recv::udp_ibv_reader>(share);
        } else {
            for (const recv::udp_config& share : split(udp_config(joined), true))
                stream->emplace_reader<recv::udp_reader>(share);
        }
        return stream;
    }

private:
    template <typename Config>
    std::vector<Config> split(const Config& whole, bool by_port) const
    {
        std::vector<Config> out;
        with_flag("--threads",
                  [&] { out = transport::split_endpoints(whole, threads, by_port); });
        return out;
    }

    recv::udp_ibv_config ibv_config(const std::string& endpoints) const
    {
        const po::variables_map& v = *vm;
        recv::udp_ibv_config c;
        with_flag("--bind", [&] { c.set_interface(v["bind"].as<std::string>()); });
        if (v.count("buffer"))
            with_flag("--buffer",
                      [&] { c.set_buffer_size(v["buffer"].as<std::size_t>()); });
        if (v.count("packet"))
            with_flag("--packet", [&] { c.set_max_size(v["packet"].as<std::size_t>()); });
        if (v.count("ibv-vector"))
            c.set_comp_vector(v["ibv-vector"].as<int>());
        if (v.count("ibv-max-poll"))
            with_flag("--ibv-max-poll",
                      [&] { c.set_max_poll(v["ibv-max-poll"].as<int>()); });
        c.set_endpoints(endpoints);
        return c;
    }

    recv::udp_config udp_config(const std::string& endpoints) const
    {
        const po::variables_map& v = *vm;
        recv::udp_config c;
        c.set_endpoints(endpoints);
        if (v.count("bind"))
            c.set_interface(v["bind"].as<std::string>());
        if (v.count("buffer"))
            c.set_buffer_size(v["buffer"].as<std::size_t>());
        if (v.count("packet"))
            c.set_max_size(v["packet"].as<std::size_t>());
        return c;
    }
};

/*! --max-heaps, or its spead2_recv name --concurrent-heaps (the same if both). */
std::size_t max_heaps_flag(const po::variables_map& vm)
{
    const std::size_t max_heaps = vm["max-heaps"].as<std::size_t>();
    if (!vm.count("concurrent-heaps"))
        return max_heaps;
    const std::size_t concurrent = vm["concurrent-heaps"].as<std::size_t>();
    if (!vm["max-heaps"].defaulted() && concurrent != max_heaps)
        throw po::error("--concurrent-heaps " + std::to_string(concurrent) +
                        " and --max-heaps " + std::to_string(max_heaps) +
                        " are the same setting; give one");
    return concurrent;
}

int run(const po::variables_map& vm)
{
    if (vm.count("tcp"))
        throw po::error("--tcp: SPEAD over TCP is not supported; spead_recv receives "
                        "UDP (kernel sockets or --ibv) and capture files");
    receiver_setup setup;
    setup.vm = &vm;
    with_flag("--max-heaps", [&] { setup.config.set_max_heaps(max_heaps_flag(vm)); });
    with_flag("--ring-heaps",
              [&] { setup.config.set_queue_heaps(vm["ring-heaps"].as<std::size_t>()); });
    setup.config.set_max_heap_size(vm["max-heap-size"].as<std::size_t>())
        .set_stop_on_stop_heap(!vm.count("ignore-stop"));
    const std::string incomplete = vm["incomplete"].as<std::string>();
    if (incomplete == "deliver")
        setup.config.set_incomplete_heaps(recv::incomplete_heaps::deliver);
    else if (incomplete != "drop")
        throw po::error("--incomplete must be drop or deliver, not '" + incomplete + "'");
    setup.threads = vm["threads"].as<std::size_t>();
    if (setup.threads == 0)
        throw po::error("--threads: 0; give the number of receive threads, at least 1");

    const auto sources = vm["source"].as<std::vector<std::string>>();
    bool any_endpoint = false;
    for (const std::string& source : sources) {
        if (is_address_without_port(source))
            throw po::error("'" + source +
                            "' is neither a UDP endpoint nor a capture file: an address "
                            "needs its port, e.g. " +
                            source + ":7148");
        any_endpoint = any_endpoint || is_endpoint(source);
    }

    setup.ibv = vm.count("ibv");
    if (setup.ibv && !vm.count("bind"))
        throw po::error("--ibv needs --bind: the IPv4 address or netdev name of the "
                        "interface whose RDMA device receives (e.g. --bind 10.0.0.2)");
    if (setup.ibv && !any_endpoint)
        throw po::error("--ibv receives UDP endpoints; give at least one (PORT, "
                        "HOST:PORT or GROUP:PORT)");
    if (!setup.ibv && (vm.count("ibv-vector") || vm.count("ibv-max-poll")))
        throw po::error("--ibv-vector and --ibv-max-poll apply only with --ibv");

    // As spead2_recv: each SOURCE is a stream of its own, which its own stop heap
    // ends, unless --joint makes them one.
    std::vector<std::unique_ptr<recv::stream>> streams;
    if (vm.count("joint"))
        streams.push_back(setup.make(sources));
    else
        for (const std::string& source : sources)
            streams.push_back(setup.make({ source }));

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    const bool quiet = vm.count("quiet");
    const bool descriptors = vm.count("descriptors");
    const bool pyspead = vm.count("pyspead");
    const bool verify = vm.count("verify");
    verifier checked;
    const std::uint64_t max_heaps = vm["heaps"].as<std::uint64_t>();
    std::uint64_t received = 0;
    const auto take = [&](const recv::heap& h) {
        received++;
        if (!quiet)
            print_heap(h, descriptors, pyspead);
        if (verify)
            checked.check(h);
    };
    // Each stream's heaps in their order; the streams take turns.
    std::vector<recv::stream*> live;
    for (const auto& s : streams)
        live.push_back(s.get());
    while (!interrupted && !live.empty() && (max_heaps == 0 || received < max_heaps)) {
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
    if (verify)
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
        "file (pcap: Ethernet or Linux cooked).\n\nspead2_recv's flags work the same "
        "way where they exist here; not supported: --tcp, and its memory tuning\n"
        "(--mem-pool, --mem-*, --memcpy-nt, --ring, --substreams).\n\nOptions");
    // clang-format off
    options.add_options()
        ("help,h", "show this help")
        ("help-stats", "list the statistics with their meaning")
        ("quiet,q", "print only the statistics, not each heap")
        ("heaps", po::value<std::uint64_t>()->default_value(0), "stop after this many heaps (0: until a stop heap, end of file or Ctrl-C)")
        ("bind", po::value<std::string>(), "interface for multicast: IPv4 address or netdev name; with --ibv the interface that receives (required)")
        ("buffer", po::value<std::size_t>(), "socket receive buffer (default 8 MiB), or with --ibv the registered receive ring (default 16 MiB) (bytes)")
        ("packet", po::value<std::size_t>(), "largest datagram accepted (bytes, default 9200)")
        ("ibv", "receive through ibverbs (raw-packet queue pair, kernel bypass) on the --bind interface; needs CAP_NET_RAW, see docs/ibverbs.md")
        ("ibv-vector", po::value<int>(), "with --ibv: completion vector for interrupts (modulo the device's vectors; negative: busy polling; default 0)")
        ("ibv-max-poll", po::value<int>(), "with --ibv: completion-queue polls per wake-up, or before yielding when busy polling (default 10)")
        ("max-heaps", po::value<std::size_t>()->default_value(4), "heaps assembled at once")
        ("concurrent-heaps", po::value<std::size_t>(), "spead2_recv's name for --max-heaps")
        ("threads", po::value<std::size_t>()->default_value(1), "receive threads per stream: the endpoints are shared among them (udp: by port; --ibv: one by one)")
        ("joint", "receive every SOURCE as one stream (default: a stream per SOURCE, each ended by its own stop heap, as spead2_recv)")
        ("descriptors", "print the descriptors each heap carries")
        ("ring-heaps", po::value<std::size_t>()->default_value(8), "completed heaps queued")
        ("max-heap-size", po::value<std::size_t>()->default_value(64 << 20), "largest heap accepted (bytes)")
        ("incomplete", po::value<std::string>()->default_value("drop"), "incomplete heaps: drop or deliver (zero-filled)")
        ("ignore-stop", "keep receiving after a stream-stop heap")
        ("pyspead", "decode descriptors with PySPEAD's field widths")
        ("verify", "check items 0x1000... against spead_send --verify's pattern and count mismatches");
    options.add_options()("tcp", "not supported: SPEAD over TCP (spead2_recv's --tcp)");
    // clang-format on
    po::options_description hidden;
    hidden.add_options()("source", po::value<std::vector<std::string>>(), "sources");
    po::positional_options_description positional;
    positional.add("source", -1);
    po::options_description all;
    all.add(options).add(hidden);
    po::variables_map vm;
    try {
        po::store(
            po::command_line_parser(argc, argv).options(all).positional(positional).run(),
            vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << options;
            return 0;
        }
        if (vm.count("help-stats")) {
            print_stats_help();
            return 0;
        }
        if (!vm.count("source"))
            throw po::error("give at least one SOURCE (an endpoint or a capture file)");
        return run(vm);
    } catch (const po::error& e) {
        std::cerr << "spead_recv: " << e.what() << "\n\n" << options;
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "spead_recv: " << e.what() << "\n";
        return 1;
    }
}
