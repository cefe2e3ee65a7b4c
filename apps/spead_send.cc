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
// with --bind; --verify writes spead2's pattern), so users can switch between the two.
// The counters that are not zero are printed (--all-stats: every one); log lines go to
// stderr.

#include "cmdline_options.h"
#include "command_line.h"
#include "heap_generator.h"
#include "stream_watch.h"
#include "tool_output.h"
#include "transport/endpoint_argument.h"
#include <gnuradio/spead/send_pcap.h>
#include <gnuradio/spead/send_rdma.h>
#include <gnuradio/spead/send_tcp.h>
#include <gnuradio/spead/send_udp.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <boost/program_options.hpp>
#include <atomic>
#include <cmath>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace po = boost::program_options;
using namespace gr::spead;
using apps::with_flag;

namespace {

int run(const apps::sender_options& o,
        const apps::watch_options& watched,
        const std::vector<std::string>& args)
{
    // ---- what to send ----
    std::unique_ptr<apps::heap_generator> generator;
    with_flag("",
              [&] { generator = std::make_unique<apps::heap_generator>(o.generator); });
    if (generator->heap_payload() != o.generator.heap_size)
        std::cerr << "Heap size is not an exact multiple: using "
                  << generator->heap_payload() << " instead of " << o.generator.heap_size
                  << "\n";

    // ---- where to ----
    std::vector<std::string> destinations;
    std::string capture = o.pcap.value_or("");
    for (const std::string& arg : args) {
        using transport::endpoint_form;
        transport::endpoint_argument a{ endpoint_form::addresses, "" };
        with_flag("", [&] {
            a = transport::read_endpoint_argument(
                arg, "DESTINATION", transport::endpoint_use::send);
        });
        if (a.form == endpoint_form::capture_file) {
            if (!capture.empty())
                throw po::error("give one capture file, not '" + capture + "' and '" +
                                arg + "'");
            capture = arg;
        } else if (a.form == endpoint_form::verbs && !o.rdma) {
            throw po::error("'" + arg + "' is " + transport::form_name(a.form) +
                            ": give --rdma to send over an RDMA connection to it");
        } else if (a.form == endpoint_form::addresses && o.rdma) {
            throw po::error("'" + arg + "' is " + transport::form_name(a.form) +
                            ", not an RDMA endpoint: with --rdma write verbs://" + arg);
        } else {
            destinations.push_back(a.text);
        }
    }
    if (destinations.empty() && capture.empty())
        throw po::error("give at least one DESTINATION (HOST:PORT) or a capture file");
    if (destinations.empty())
        destinations.push_back("127.0.0.1:7148"); // the frames' destination in the file
    std::string joined;
    for (const std::string& d : destinations)
        joined += (joined.empty() ? "" : ",") + d;

    const send::stream_config config = o.stream_config();
    if (o.ibv.ibv && !capture.empty())
        throw po::error("--ibv sends to the network; it cannot record to a capture file");
    if (o.rdma && (!capture.empty() || destinations.size() != 1))
        throw po::error("--rdma connects to one DESTINATION (verbs://HOST:PORT); give "
                        "exactly one and no capture file");
    if (o.tcp && (!capture.empty() || destinations.size() != 1))
        throw po::error("--tcp connects to one DESTINATION (HOST:PORT); give exactly "
                        "one and no capture file");

    boost::asio::io_context io;
    std::unique_ptr<send::stream> stream;
    if (o.ibv.ibv) {
        stream = std::make_unique<send::udp_ibv_stream>(io, config, o.ibv_config(joined));
    } else if (o.rdma) {
        stream = std::make_unique<send::rdma_stream>(io, config, o.rdma_config(joined));
    } else if (o.tcp) {
        stream = std::make_unique<send::tcp_stream>(io, config, o.tcp_config(joined));
    } else {
        const send::udp_config udp = o.udp_config(joined);
        if (!capture.empty())
            stream = std::make_unique<send::pcap_stream>(
                io, config, capture, udp.get_endpoints());
        else
            stream = std::make_unique<send::udp_stream>(io, config, udp);
    }

    apps::stop_on_signals();
    // --metrics, --progress: while the heaps go out
    std::optional<apps::stream_watch> watch(std::in_place, watched, "spead_send");
    watch->watch_sender(*stream,
                        o.ibv.ibv ? "ibverbs"
                        : o.rdma  ? "rdma"
                        : o.tcp   ? "tcp"
                                  : (capture.empty() ? "udp" : "pcap"),
                        capture.empty() ? joined : capture);
    const apps::generator_result result = generator->run(*stream, io, apps::interrupted);
    watch.reset();
    // Every heap has completed, so the counters are final.
    const send_stats stats = stream->get_stats();
    stream.reset(); // joins the writer and closes the socket or file

    std::cout << "Sent " << result.bytes << " bytes in " << result.seconds << " seconds, "
              << (result.seconds > 0 ? result.bytes * 8e-9 / result.seconds : 0.0)
              << " Gb/s\n";
    std::cout << "data_heaps: " << result.data_heaps << "\n"
              << "control_heaps: " << result.control_heaps << "\n";
    apps::print_counters(stats.items(), o.output.all_stats);
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
        "DESTINATION is HOST:PORT (or a range GROUP+N:PORT, or IPv6 [ADDRESS]:PORT); "
        "several\n"
        "get one substream each and the data heaps go round-robin; --tcp connects to "
        "one,\n"
        "--rdma to one verbs://HOST:PORT. The blocks' endpoints take the same forms. A\n"
        "capture file (CAPTURE.pcap or --pcap)\n"
        "records the packets instead of sending them, addressed to the destinations\n"
        "(default 127.0.0.1:7148).\n\n"
        "Data heaps carry --items items (ids 0x1000, 0x1001, ...) of big-endian uint32\n"
        "elements, --heap-size bytes in all, as spead2_send's. With --verify their "
        "values\n"
        "are spead2's pattern, which spead_recv --verify and spead2_recv --verify check\n"
        "(apps/verify_pattern.h).\n\nOptions");
    apps::add_help(options);
    apps::sender_options sender;
    sender.add_to(options);
    apps::watch_options watch;
    watch.add_to(options);
    std::vector<std::string> destinations;
    apps::log_to_stderr();
    return apps::exit_status("spead_send", options, [&] {
        const po::variables_map vm =
            apps::parse_command_line(argc,
                                     argv,
                                     options,
                                     "destination",
                                     destinations,
                                     po::command_line_style::default_style &
                                         ~po::command_line_style::allow_guessing);
        if (apps::answer_help<send_stat>(vm, options))
            return 0;
        sender.check();
        watch.check();
        return run(sender, watch, destinations);
    });
}
