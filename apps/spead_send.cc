/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_send: a heap generator. Sends heaps of test items to UDP destinations (one
// substream each, heaps round-robin) or records them to a capture file, then prints
// the achieved rate and the stream statistics as "name: value" lines. Flags follow
// spead2_send where the meaning is the same (--rate is in Gb/s, --heaps -1 sends until
// Ctrl-C; --ibv sends through an ibverbs raw-packet queue pair on the interface given
// with --bind), so users can switch between the two.

#include "flag_error.h"
#include "heap_generator.h"
#include "payload_pattern.h"
#include <gnuradio/spead/send_pcap.h>
#include <gnuradio/spead/send_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <boost/program_options.hpp>
#include <atomic>
#include <cmath>
#include <csignal>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace po = boost::program_options;
using namespace gr::spead;
using apps::with_flag;

namespace {

std::atomic<bool> interrupted{ false };

void on_signal(int) { interrupted = true; }

bool is_capture_file(const std::string& arg)
{
    auto ends_with = [&arg](const std::string& suffix) {
        return arg.size() > suffix.size() &&
               arg.compare(arg.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    return ends_with(".pcap") || ends_with(".pcapng");
}

/*! HOST:PORT (or a range ADDRESS+N:PORT) with a numeric port. */
bool is_destination(const std::string& arg)
{
    const auto colon = arg.rfind(':');
    if (colon == std::string::npos || colon == 0)
        return false;
    const std::string port = arg.substr(colon + 1);
    if (port.empty() || port.size() > 5)
        return false;
    for (char c : port)
        if (c < '0' || c > '9')
            return false;
    return true;
}

int run(const po::variables_map& vm)
{
    // ---- what to send ----
    apps::generator_config gen;
    gen.heap_size = vm["heap-size"].as<std::size_t>();
    gen.items = vm["items"].as<std::size_t>();
    gen.heaps = vm["heaps"].as<std::int64_t>();
    gen.addr_bits = vm["addr-bits"].as<int>();
    gen.pyspead = vm.count("pyspead");
    gen.verify = vm.count("verify");
    gen.descriptor_interval = vm["descriptor-interval"].as<std::uint64_t>();
    gen.descriptors = vm.count("descriptors") || gen.descriptor_interval > 0;
    gen.stop_heap = !vm.count("no-stop");
    gen.max_heaps = vm["max-heaps"].as<std::size_t>();
    gen.timestamp_item = vm["timestamp-item"].as<std::uint64_t>();
    if (gen.heaps < -1)
        throw po::error("--heaps: " + std::to_string(gen.heaps) +
                        " is not a count; give N >= 0, or -1 to send until Ctrl-C");
    std::unique_ptr<apps::heap_generator> generator;
    with_flag("", [&] { generator = std::make_unique<apps::heap_generator>(gen); });
    if (generator->heap_payload() != gen.heap_size)
        std::cerr << "Heap size is not an exact multiple: using "
                  << generator->heap_payload() << " instead of " << gen.heap_size << "\n";

    // ---- where to ----
    std::vector<std::string> destinations;
    std::string capture;
    if (vm.count("pcap"))
        capture = vm["pcap"].as<std::string>();
    if (vm.count("destination")) {
        for (const std::string& arg : vm["destination"].as<std::vector<std::string>>()) {
            if (is_capture_file(arg)) {
                if (!capture.empty())
                    throw po::error("give one capture file, not '" + capture + "' and '" +
                                    arg + "'");
                capture = arg;
            } else if (is_destination(arg)) {
                destinations.push_back(arg);
            } else {
                throw po::error("'" + arg +
                                "' is neither a destination HOST:PORT nor a capture "
                                "file (*.pcap)");
            }
        }
    }
    if (destinations.empty() && capture.empty())
        throw po::error("give at least one DESTINATION (HOST:PORT) or a capture file");
    if (destinations.empty())
        destinations.push_back("127.0.0.1:7148"); // the frames' destination in the file
    std::string joined;
    for (const std::string& d : destinations)
        joined += (joined.empty() ? "" : ",") + d;

    send::stream_config config;
    const double rate_gbps = vm["rate"].as<double>();
    with_flag("--packet",
              [&] { config.set_max_packet_size(vm["packet"].as<std::size_t>()); });
    if (!std::isfinite(rate_gbps) || rate_gbps < 0)
        throw po::error("--rate: " + (std::ostringstream() << rate_gbps).str() +
                        " is not a rate; give Gb/s >= 0 (0: as fast as possible)");
    config.set_rate(rate_gbps * 1e9 / 8);
    with_flag("--burst", [&] { config.set_burst_size(vm["burst"].as<std::size_t>()); });
    with_flag("--max-heaps", [&] { config.set_max_heaps(gen.max_heaps); });
    // The generator refills the queue from its completion handlers: run them on the
    // writer thread, so that sending never waits for this thread to be scheduled.
    config.set_inline_completions(true);

    const bool ibv = vm.count("ibv");
    if (ibv && !capture.empty())
        throw po::error("--ibv sends to the network; it cannot record to a capture file");
    if (ibv && !vm.count("bind"))
        throw po::error("--ibv needs --bind: the IPv4 address or netdev name of the "
                        "interface whose RDMA device sends (e.g. --bind 10.0.0.1)");
    if (!ibv && (vm.count("ibv-vector") || vm.count("ibv-max-poll")))
        throw po::error("--ibv-vector and --ibv-max-poll apply only with --ibv");

    boost::asio::io_context io;
    std::unique_ptr<send::stream> stream;
    if (ibv) {
        send::udp_ibv_config ibv_config;
        with_flag("--ttl", [&] { ibv_config.set_ttl(vm["ttl"].as<int>()); });
        with_flag("--buffer",
                  [&] { ibv_config.set_buffer_size(vm["buffer"].as<std::size_t>()); });
        with_flag("--bind",
                  [&] { ibv_config.set_interface(vm["bind"].as<std::string>()); });
        if (vm.count("ibv-vector"))
            ibv_config.set_comp_vector(vm["ibv-vector"].as<int>());
        if (vm.count("ibv-max-poll"))
            with_flag("--ibv-max-poll",
                      [&] { ibv_config.set_max_poll(vm["ibv-max-poll"].as<int>()); });
        // Destinations are checked last: a bad one is a runtime error (exit 1), like
        // an unreachable one.
        ibv_config.set_endpoints(joined);
        stream = std::make_unique<send::udp_ibv_stream>(io, config, ibv_config);
    } else {
        send::udp_config udp;
        with_flag("--ttl", [&] { udp.set_ttl(vm["ttl"].as<int>()); });
        with_flag("--buffer",
                  [&] { udp.set_buffer_size(vm["buffer"].as<std::size_t>()); });
        if (vm.count("bind"))
            with_flag("--bind", [&] { udp.set_interface(vm["bind"].as<std::string>()); });
        udp.set_endpoints(joined);
        if (!capture.empty())
            stream = std::make_unique<send::pcap_stream>(
                io, config, capture, udp.get_endpoints());
        else
            stream = std::make_unique<send::udp_stream>(io, config, udp);
    }

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    const apps::generator_result result = generator->run(*stream, io, interrupted);
    // Every heap has completed, so the counters are final.
    const send_stats stats = stream->get_stats();
    stream.reset(); // joins the writer and closes the socket or file

    std::cout << "Sent " << result.bytes << " bytes in " << result.seconds << " seconds, "
              << (result.seconds > 0 ? result.bytes * 8e-9 / result.seconds : 0.0)
              << " Gb/s\n";
    std::cout << "data_heaps: " << result.data_heaps << "\n"
              << "control_heaps: " << result.control_heaps << "\n";
    for (const auto& [name, value] : stats.items())
        std::cout << name << ": " << value << "\n";
    if (result.error) {
        std::cerr << "spead_send: sending to "
                  << (capture.empty() ? joined : "capture file " + capture)
                  << " failed: " << result.error.message() << " (" << result.heaps_failed
                  << (result.heaps_failed == 1 ? " heap" : " heaps") << " not sent)\n";
        return 1;
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    po::options_description options(
        "spead_send [options] DESTINATION... | CAPTURE.pcap\n\n"
        "DESTINATION is HOST:PORT (or a range GROUP+N:PORT); several get one substream\n"
        "each and the data heaps go round-robin. A capture file (CAPTURE.pcap or "
        "--pcap)\n"
        "records the packets instead of sending them, addressed to the destinations\n"
        "(default 127.0.0.1:7148).\n\n"
        "Data heaps carry --items items (ids 0x1000, 0x1001, ...) of complex64 "
        "elements,\n"
        "--heap-size bytes in all. With --verify every item byte follows the pattern\n"
        "that `spead_recv --verify` checks (see apps/payload_pattern.h).\n\nOptions");
    // clang-format off
    options.add_options()
        ("help,h", "show this help")
        ("heap-size", po::value<std::size_t>()->default_value(4194304), "payload per data heap (bytes)")
        ("items", po::value<std::size_t>()->default_value(1), "items per heap")
        ("heaps", po::value<std::int64_t>()->default_value(-1), "data heaps to send (-1: until Ctrl-C)")
        ("packet", po::value<std::size_t>()->default_value(1472), "largest SPEAD packet, the UDP payload (bytes)")
        ("addr-bits", po::value<int>()->default_value(40), "heap address bits: SPEAD-64-XX flavour (40 or 48)")
        ("pyspead", "encode descriptors with PySPEAD's field widths")
        ("rate", po::value<double>()->default_value(0.0), "send rate of SPEAD packets (Gb/s; 0: as fast as possible)")
        ("burst", po::value<std::size_t>()->default_value(65536), "bytes sent back-to-back before the rate limiter waits")
        ("max-heaps", po::value<std::size_t>()->default_value(4), "heaps in flight")
        ("ttl", po::value<int>()->default_value(1), "IP time-to-live")
        ("bind", po::value<std::string>(), "interface to send from: IPv4 address or netdev name (required with --ibv)")
        ("buffer", po::value<std::size_t>()->default_value(send::udp_config::default_buffer_size), "socket send buffer, or with --ibv the registered transmit ring (bytes)")
        ("ibv", "send through ibverbs (raw-packet queue pair, kernel bypass) on the --bind interface; needs CAP_NET_RAW, see docs/ibverbs.md")
        ("ibv-vector", po::value<int>(), "with --ibv: completion vector for interrupts (modulo the device's vectors; negative: busy polling; default 0)")
        ("ibv-max-poll", po::value<int>(), "with --ibv: completion-queue polls before waiting (default 10)")
        ("pcap", po::value<std::string>(), "record to this capture file instead of sending")
        ("descriptors", "send a descriptor heap first (to every destination)")
        ("descriptor-interval", po::value<std::uint64_t>()->default_value(0), "and again every N data heaps (implies --descriptors)")
        ("timestamp-item", po::value<std::uint64_t>()->default_value(0), "each data heap also carries this immediate item, in every packet: k × heap bytes (a timestamp counting int8 samples, for spead.source output_mode=continuous); 0: none")
        ("no-stop", "do not send a stop heap at the end")
        ("verify", "fill items with the verifiable payload pattern (costs CPU per heap)");
    // clang-format on
    po::options_description hidden;
    hidden.add_options()(
        "destination", po::value<std::vector<std::string>>(), "destinations");
    po::positional_options_description positional;
    positional.add("destination", -1);
    po::options_description all;
    all.add(options).add(hidden);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv)
                      .style(po::command_line_style::default_style &
                             ~po::command_line_style::allow_guessing)
                      .options(all)
                      .positional(positional)
                      .run(),
                  vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << options;
            return 0;
        }
        return run(vm);
    } catch (const po::error& e) {
        std::cerr << "spead_send: " << e.what() << "\n\n" << options;
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "spead_send: " << e.what() << "\n";
        return 1;
    }
}
