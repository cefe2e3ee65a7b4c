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
// does). With --verify, items 0x1000... are checked against spead2's --verify pattern
// (apps/verify_pattern.h), which spead_send --verify and spead2_send --verify write. The
// counters that are not zero follow the heaps (--all-stats: every one); log lines go to
// stderr. With --timestamp-item, data heaps
// are placed by timestamp as spead.source's continuous mode places them, and a line per
// chunk of positions is printed instead (--first-substream takes a host's share).

#include "cmdline_options.h"
#include "command_line.h"
#include "stream_watch.h"
#include "tool_output.h"
#include "transport/endpoint_argument.h"
#include "transport/split_endpoints.h"
#include "verify_pattern.h"
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
using argument = transport::endpoint_argument;

namespace {

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

/*! Counts what `--verify` finds: heaps whose test items differ from spead2's pattern.
 * The first mismatches are said on stderr as spead2_recv says them. */
struct verifier {
    static constexpr std::uint64_t max_reported = 10;

    std::uint64_t heaps = 0;            //!< heaps with test items
    std::uint64_t heaps_mismatched = 0; //!< of those, heaps with a differing element
    std::uint64_t elements_mismatched = 0;

    void check(const recv::heap& h)
    {
        const apps::pattern_check c = apps::check_pattern(h);
        heaps += c.verifiable;
        if (!c.inconsistent_length && c.bad_elements == 0)
            return;
        elements_mismatched += c.bad_elements;
        if (heaps_mismatched++ >= max_reported)
            return;
        if (c.inconsistent_length)
            std::cerr << "Heap " << h.cnt() << ", item " << hex(c.item)
                      << " has an inconsistent length\n";
        else
            std::cerr << "Verification mismatch in heap " << h.cnt() << ", item "
                      << hex(c.item) << " offset " << c.offset << "\nexpected "
                      << hex(c.expected) << ", actual " << hex(c.actual) << " ("
                      << c.bad_elements << " elements of the heap differ)\n";
    }

    bool failed() const { return heaps_mismatched != 0; }

    void print() const
    {
        std::cout << "verify_heaps: " << heaps << "\n"
                  << "verify_heaps_mismatched: " << heaps_mismatched << "\n"
                  << "verify_elements_mismatched: " << elements_mismatched << "\n";
    }
};

/*! \p endpoints as text, "a, b". */
template <typename Endpoints>
std::string listed(const Endpoints& endpoints)
{
    std::ostringstream out;
    for (const auto& ep : endpoints)
        out << (out.tellp() ? ", " : "") << ep;
    return out.str();
}

/*! A stream receiving \p sources (files and endpoints), each endpoint list split among
 * the receive threads. Says on stderr where each reader listens. */
std::unique_ptr<recv::stream> make_stream(const apps::receiver_options& o,
                                          const std::vector<argument>& sources)
{
    std::string joined;
    auto stream = std::make_unique<recv::stream>(o.stream_config());
    for (const argument& source : sources) {
        if (source.form == transport::endpoint_form::capture_file)
            stream->emplace_reader<recv::pcap_reader>(source.text);
        else
            joined += (joined.empty() ? "" : ",") + source.text;
    }
    if (joined.empty())
        return stream;
    if (o.tcp || o.rdma) {
        // One listener per SOURCE, for --max-connections senders (spead2_recv: one).
        std::size_t begin = 0;
        while (begin <= joined.size()) {
            const auto comma = std::min(joined.find(',', begin), joined.size());
            const std::string one = joined.substr(begin, comma - begin);
            if (o.rdma) {
                stream->emplace_reader<recv::rdma_reader>(o.rdma_config(one));
                std::cerr << "spead_recv: listening for RDMA connections on " << one
                          << "\n";
            } else {
                auto& reader =
                    stream->emplace_reader<recv::tcp_reader>(o.tcp_config(one));
                std::cerr << "spead_recv: listening for TCP connections on "
                          << reader.get_bound_endpoint() << "\n";
            }
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
        for (const recv::udp_ibv_config& share : split(o.ibv_config(joined), false)) {
            stream->emplace_reader<recv::udp_ibv_reader>(share);
            std::cerr << "spead_recv: receiving " << listed(share.get_endpoints())
                      << " over ibverbs on " << *o.ibv.bind << "\n";
        }
    } else {
        for (const recv::udp_config& share : split(o.udp_config(joined), true)) {
            auto& reader = stream->emplace_reader<recv::udp_reader>(share);
            const std::string groups = transport::joined_groups_text(
                share.get_endpoints(), share.get_interface());
            std::cerr << "spead_recv: listening on "
                      << listed(reader.get_bound_endpoints())
                      << (groups.empty() ? "" : ", " + groups) << "\n";
        }
    }
    return stream;
}

/*! \p sources read as every tool and block reads endpoints, and checked against the
 * transport the flags choose. \throws boost::program_options::error naming the fix */
std::vector<argument> read_sources(const apps::receiver_options& o,
                                   const std::vector<std::string>& sources)
{
    using transport::endpoint_form;
    std::vector<argument> out;
    bool any_endpoint = false;
    for (const std::string& source : sources) {
        argument a{ endpoint_form::addresses, "" };
        with_flag("", [&] {
            a = transport::read_endpoint_argument(
                source, "SOURCE", transport::endpoint_use::receive);
        });
        const std::string is = "'" + source + "' is " + transport::form_name(a.form);
        if (a.form == endpoint_form::capture_file && (o.tcp || o.rdma))
            throw po::error(is + ", which " + (o.tcp ? "--tcp" : "--rdma") +
                            " does not take: drop " + (o.tcp ? "--tcp" : "--rdma") +
                            " to replay it, or give where to listen (" +
                            (o.tcp ? "HOST:PORT or PORT" : "verbs://ADDR:PORT") + ")");
        if (a.form == endpoint_form::verbs && !o.rdma)
            throw po::error(is + ": give --rdma to listen for RDMA connections there");
        if (a.form == endpoint_form::addresses && o.rdma)
            throw po::error(is + ", not an RDMA endpoint: with --rdma write verbs://" +
                            a.text);
        any_endpoint = any_endpoint || a.form != endpoint_form::capture_file;
        out.push_back(a);
    }
    if (o.ibv.ibv && !any_endpoint)
        throw po::error("--ibv receives UDP endpoints; give at least one (PORT, "
                        "HOST:PORT or GROUP:PORT)");
    return out;
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
        const std::vector<std::string>& arguments)
{
    const std::vector<argument> sources = read_sources(o, arguments);

    // As spead2_recv: each SOURCE is a stream of its own, which its own stop heap
    // ends, unless --joint makes them one.
    std::vector<std::unique_ptr<recv::stream>> streams;
    if (o.joint)
        streams.push_back(make_stream(o, sources));
    else
        for (const argument& source : sources)
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
                           arguments,
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
    if ((o.tcp || o.rdma) && !o.listen.keep_listening && !apps::interrupted &&
        total[recv_stat::stop_heaps] == 0 && total[recv_stat::connections_accepted] > 0)
        // The listener ended with its senders: say so, and how to wait for the next.
        std::cerr << "spead_recv: every sender disconnected without a stop heap, which "
                     "ends the stream (as spead2_recv --tcp); --keep-listening waits for "
                     "the next sender instead\n";
    std::cout << "Received " << received << " heaps\n";
    apps::print_counters(total.items(), o.output.all_stats);
    if (o.verify)
        checked.print();
    return failed || checked.failed() ? 1 : 0;
}

} // namespace

int main(int argc, char** argv)
{
    po::options_description options(
        "spead_recv [options] SOURCE...\n\n"
        "SOURCE is a UDP endpoint (PORT, HOST:PORT, :PORT, a multicast GROUP:PORT, a "
        "range\n"
        "GROUP+N:PORT, or IPv6 [ADDRESS]:PORT), or a capture file (pcap: Ethernet or "
        "Linux\ncooked); with --tcp, HOST:PORT or PORT to listen on; with --rdma, "
        "verbs://ADDR:PORT.\nThe blocks' endpoints take the same forms.\n\n"
        "spead2_recv's flags work the same "
        "way where they exist here; not supported: its memory tuning\n"
        "(--mem-pool, --mem-*, --memcpy-nt, --ring, --substreams).\n\nOptions");
    apps::add_help(options);
    apps::receiver_options receiver;
    receiver.add_to(options);
    apps::watch_options watch;
    watch.add_to(options);
    std::vector<std::string> sources;
    apps::log_to_stderr();
    return apps::exit_status("spead_recv", options, [&] {
        const po::variables_map vm =
            apps::parse_command_line(argc, argv, options, "source", sources);
        if (apps::answer_help<recv_stat>(vm, options))
            return 0;
        if (sources.empty())
            throw po::error("give at least one SOURCE (an endpoint or a capture file)");
        receiver.check(vm);
        watch.check();
        return run(receiver, watch, sources);
    });
}
