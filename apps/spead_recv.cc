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

void print_heap(const recv::heap& h, bool pyspead)
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
    for (const descriptor& d : h.descriptors(pyspead)) {
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

int run(const po::variables_map& vm)
{
    recv::stream_config config;
    config.set_max_heaps(vm["max-heaps"].as<std::size_t>())
        .set_queue_heaps(vm["ring-heaps"].as<std::size_t>())
        .set_max_heap_size(vm["max-heap-size"].as<std::size_t>())
        .set_stop_on_stop_heap(!vm.count("ignore-stop"));
    const std::string incomplete = vm["incomplete"].as<std::string>();
    if (incomplete == "deliver")
        config.set_incomplete_heaps(recv::incomplete_heaps::deliver);
    else if (incomplete != "drop")
        throw po::error("--incomplete must be drop or deliver, not '" + incomplete + "'");

    std::vector<std::string> files, endpoints;
    for (const std::string& source : vm["source"].as<std::vector<std::string>>()) {
        if (is_address_without_port(source))
            throw po::error("'" + source +
                            "' is neither a UDP endpoint nor a capture file: an address "
                            "needs its port, e.g. " +
                            source + ":7148");
        (is_endpoint(source) ? endpoints : files).push_back(source);
    }

    const bool ibv = vm.count("ibv");
    if (ibv && !vm.count("bind"))
        throw po::error("--ibv needs --bind: the IPv4 address or netdev name of the "
                        "interface whose RDMA device receives (e.g. --bind 10.0.0.2)");
    if (ibv && endpoints.empty())
        throw po::error("--ibv receives UDP endpoints; give at least one (PORT, "
                        "HOST:PORT or GROUP:PORT)");
    if (!ibv && (vm.count("ibv-vector") || vm.count("ibv-max-poll")))
        throw po::error("--ibv-vector and --ibv-max-poll apply only with --ibv");
    std::string joined;
    for (const std::string& e : endpoints)
        joined += (joined.empty() ? "" : ",") +
                  (e.find(':') == std::string::npos ? ":" + e : e);

    recv::stream stream(config);
    for (const std::string& file : files)
        stream.emplace_reader<recv::pcap_reader>(file);
    if (ibv) {
        recv::udp_ibv_config ibv_config;
        with_flag("--bind",
                  [&] { ibv_config.set_interface(vm["bind"].as<std::string>()); });
        if (vm.count("buffer"))
            with_flag("--buffer", [&] {
                ibv_config.set_buffer_size(vm["buffer"].as<std::size_t>());
            });
        if (vm.count("packet"))
            with_flag("--packet",
                      [&] { ibv_config.set_max_size(vm["packet"].as<std::size_t>()); });
        if (vm.count("ibv-vector"))
            ibv_config.set_comp_vector(vm["ibv-vector"].as<int>());
        if (vm.count("ibv-max-poll"))
            with_flag("--ibv-max-poll",
                      [&] { ibv_config.set_max_poll(vm["ibv-max-poll"].as<int>()); });
        ibv_config.set_endpoints(joined);
        stream.emplace_reader<recv::udp_ibv_reader>(ibv_config);
    } else if (!endpoints.empty()) {
        recv::udp_config udp;
        udp.set_endpoints(joined);
        if (vm.count("bind"))
            udp.set_interface(vm["bind"].as<std::string>());
        if (vm.count("buffer"))
            udp.set_buffer_size(vm["buffer"].as<std::size_t>());
        if (vm.count("packet"))
            udp.set_max_size(vm["packet"].as<std::size_t>());
        stream.emplace_reader<recv::udp_reader>(udp);
    }

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    const bool quiet = vm.count("quiet");
    const bool pyspead = vm.count("pyspead");
    const bool verify = vm.count("verify");
    verifier checked;
    const std::uint64_t max_heaps = vm["heaps"].as<std::uint64_t>();
    std::uint64_t received = 0;
    while (!interrupted && (max_heaps == 0 || received < max_heaps)) {
        recv::heap h;
        const auto result = stream.pop(h, std::chrono::milliseconds(100));
        if (result == recv::stream::pop_result::stopped)
            break;
        if (result == recv::stream::pop_result::heap) {
            received++;
            if (!quiet)
                print_heap(h, pyspead);
            if (verify)
                checked.check(h);
        }
    }
    stream.stop();
    std::cout << "Received " << received << " heaps\n";
    for (const auto& [name, value] : stream.get_stats().items())
        std::cout << name << ": " << value << "\n";
    if (verify)
        checked.print();
    if (stream.has_failed()) {
        // The counters above are still right: say why the stream ended early.
        std::cerr << "spead_recv: the receiver failed: " << stream.get_failure() << "\n";
        return 1;
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    po::options_description options(
        "spead_recv [options] SOURCE...\n\n"
        "SOURCE is a UDP endpoint (PORT, HOST:PORT, a multicast "
        "GROUP:PORT, or a range GROUP+N:PORT)\nor a capture "
        "file (pcap: Ethernet or Linux cooked).\n\nOptions");
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
        ("ring-heaps", po::value<std::size_t>()->default_value(8), "completed heaps queued")
        ("max-heap-size", po::value<std::size_t>()->default_value(64 << 20), "largest heap accepted (bytes)")
        ("incomplete", po::value<std::string>()->default_value("drop"), "incomplete heaps: drop or deliver (zero-filled)")
        ("ignore-stop", "keep receiving after a stream-stop heap")
        ("pyspead", "decode descriptors with PySPEAD's field widths")
        ("verify", "check items 0x1000... against spead_send --verify's pattern and count mismatches");
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
