/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cmdline_options.h"
#include <gnuradio/spead/substream_set.h>
#include <cmath>
#include <sstream>

namespace po = boost::program_options;

namespace gr {
namespace spead {
namespace apps {

namespace {
/*! A value that fills \p target when given (an option with no default). */
template <typename T>
po::typed_value<T>* optional_value(std::optional<T>& target)
{
    return po::value<T>()->notifier([&target](const T& v) { target = v; });
}
} // namespace

// ---- ibv_options ---------------------------------------------------------------------

void ibv_options::add_bind_to(po::options_description& options, const char* help)
{
    options.add_options()("bind", optional_value(bind), help);
}

void ibv_options::add_to(po::options_description& options,
                         const std::string& verb,
                         const char* max_poll_help)
{
    const std::string ibv_help =
        verb + " through ibverbs (raw-packet queue pair, kernel bypass) "
               "on the --bind interface; needs CAP_NET_RAW, see "
               "docs/ibverbs.md";
    // clang-format off
    options.add_options()
        ("ibv", po::bool_switch(&ibv), ibv_help.c_str())
        ("ibv-vector", optional_value(comp_vector), "with --ibv: completion vector for interrupts (modulo the device's vectors; negative: busy polling; default 0)")
        ("ibv-max-poll", optional_value(max_poll), max_poll_help);
    // clang-format on
}

void ibv_options::check(const std::string& does, const std::string& example) const
{
    if (ibv && !bind)
        throw po::error("--ibv needs --bind: the IPv4 address or netdev name of the "
                        "interface whose RDMA device " +
                        does + " (e.g. --bind " + example + ")");
    if (!ibv && (comp_vector || max_poll))
        throw po::error("--ibv-vector and --ibv-max-poll apply only with --ibv");
}

// ---- output_options ------------------------------------------------------------------

void output_options::add_to(po::options_description& options)
{
    options.add_options()("all-stats",
                          po::bool_switch(&all_stats),
                          "print every counter at the end, not only the non-zero ones");
}

// ---- receiver_options ----------------------------------------------------------------

void receiver_options::add_to(po::options_description& options)
{
    // clang-format off
    options.add_options()
        ("quiet,q", po::bool_switch(&quiet), "print only the statistics, not each heap")
        ("heaps", po::value(&heaps)->default_value(0), "stop after this many heaps (0: until a stop heap, end of file or Ctrl-C)");
    ibv.add_bind_to(options, "interface for multicast: IPv4 address or netdev name; with --ibv the interface that receives (required)");
    options.add_options()
        ("buffer", optional_value(buffer), "socket receive buffer (default 8 MiB), or with --ibv the registered receive ring (default 16 MiB) (bytes)")
        ("packet", optional_value(packet), "largest datagram accepted (bytes, default 9200)");
    ibv.add_to(options, "receive", "with --ibv: completion-queue polls per wake-up, or before yielding when busy polling (default 10)");
    options.add_options()
        ("max-heaps", po::value(&max_heaps)->default_value(4), "heaps assembled at once")
        ("concurrent-heaps", optional_value(concurrent_heaps), "spead2_recv's name for --max-heaps")
        ("threads", po::value(&threads)->default_value(1), "receive threads per stream: the endpoints are shared among them (udp: by port; --ibv: one by one)")
        ("joint", po::bool_switch(&joint), "receive every SOURCE as one stream (default: a stream per SOURCE, each ended by its own stop heap, as spead2_recv)")
        ("descriptors", po::bool_switch(&descriptors), "print the descriptors each heap carries")
        ("ring-heaps", po::value(&ring_heaps)->default_value(8), "completed heaps queued")
        ("max-heap-size", po::value(&max_heap_size)->default_value(64 << 20), "largest heap accepted (bytes)")
        ("incomplete", po::value(&incomplete)->default_value("drop"), "incomplete heaps: drop or deliver (zero-filled)")
        ("full-queue-policy", po::value(&full_queue_policy)->default_value("block"), "when --ring-heaps heaps wait: block (spead2_recv's: the receiver waits, and only the kernel drops, at a full socket buffer, counted in packets_dropped_socket_overflow) or drop (spead.source's: the newest heap, counted in heaps_dropped_queue_full); a capture always waits")
        ("ignore-stop", po::bool_switch(&ignore_stop), "keep receiving after a stream-stop heap")
        ("pyspead", po::bool_switch(&pyspead), "decode descriptors with PySPEAD's field widths")
        ("verify", po::bool_switch(&verify), "check items 0x1000... against spead2's --verify pattern (spead_send --verify, spead2_send --verify): mismatches are said on stderr and counted, and the exit status is 1");
    options.add_options()("tcp", po::bool_switch(&tcp), "listen for SPEAD over TCP on each SOURCE (HOST:PORT or PORT) instead of UDP: --max-connections senders each (default 1, as spead2_recv --tcp); --packet is the largest frame (default 65536)");
    options.add_options()("rdma", po::bool_switch(&rdma), "listen for SPEAD over RDMA (RC queue pairs, rdma_cm) on each SOURCE (verbs://ADDR:PORT or verbs://:PORT), as --tcp; --packet is the largest message (default 1 MiB + 4 KiB: a 1 MiB heap in one); GR_SPEAD_RDMA_* apply");
    listen.add_to(options);
    output.add_to(options);
    po::options_description continuous("Continuous mode (as spead.source output_mode=continuous; docs/continuous.md): prints each chunk of positions instead of each heap");
    continuous.add_options()
        ("timestamp-item", po::value(&timestamp_item)->default_value(0), "place each data heap by this immediate item (its timestamp): continuous mode; 0: heaps")
        ("timestamp-step", po::value(&timestamp_step)->default_value(0), "timestamp increase from one heap to the next (0: the heap's bytes)")
        ("substream-count", po::value(&substream_count)->default_value(1), "substreams this host takes (spead.source's substreams)")
        ("substream-item", po::value(&substream_item)->default_value(0), "immediate item naming a heap's substream")
        ("first-substream", po::value(&first_substream)->default_value(0), "the first substream this host takes: it takes first .. first + count - 1, and counts the others' heaps in heaps_other_substream")
        ("substream-ids", po::value(&substream_ids), "or the substreams this host takes, in output order: ids and ranges, e.g. 8-11 or 8,9,10,11 (--substream-count defaults to how many)")
        ("window-heaps", po::value(&window_heaps)->default_value(64), "positions that may fill at once");
    options.add(continuous);
    // clang-format on
}

void receiver_options::check(const po::variables_map& vm)
{
    if (tcp && ibv.ibv)
        throw po::error("--tcp and --ibv: give one; ibverbs receives UDP datagrams");
    if (rdma && (tcp || ibv.ibv))
        throw po::error(std::string("--rdma and ") + (tcp ? "--tcp" : "--ibv") +
                        ": give one; --rdma listens for RDMA connections");
    listen.check(vm, tcp || rdma);
    // --concurrent-heaps is --max-heaps under spead2_recv's name: the same if both.
    if (concurrent_heaps) {
        if (!vm["max-heaps"].defaulted() && *concurrent_heaps != max_heaps)
            throw po::error("--concurrent-heaps " + std::to_string(*concurrent_heaps) +
                            " and --max-heaps " + std::to_string(max_heaps) +
                            " are the same setting; give one");
        max_heaps = *concurrent_heaps;
    }
    with_flag("--max-heaps", [&] { d_stream.set_max_heaps(max_heaps); });
    with_flag("--ring-heaps", [&] { d_stream.set_queue_heaps(ring_heaps); });
    // Heaps only: continuous mode has its own (a reader never waits; see below).
    if (!continuous())
        with_flag("--full-queue-policy", [&] {
            d_stream.set_full_queue_policy(
                recv::full_queue_policy_from_name(full_queue_policy));
        });
    d_stream.set_max_heap_size(max_heap_size).set_stop_on_stop_heap(!ignore_stop);
    if (incomplete == "deliver")
        d_stream.set_incomplete_heaps(recv::incomplete_heaps::deliver);
    else if (incomplete != "drop")
        throw po::error("--incomplete must be drop or deliver, not '" + incomplete + "'");
    if (threads == 0)
        throw po::error("--threads: 0; give the number of receive threads, at least 1");
    ibv.check("receives", "10.0.0.2");
    if (!continuous()) {
        if (!vm["substream-item"].defaulted() || !vm["first-substream"].defaulted() ||
            vm.count("substream-ids") || !vm["substream-count"].defaulted() ||
            !vm["timestamp-step"].defaulted() || !vm["window-heaps"].defaulted())
            throw po::error("--substream-*, --first-substream, --timestamp-step and "
                            "--window-heaps apply to continuous mode: give "
                            "--timestamp-item too");
        return;
    }
    if (verify || heaps != 0)
        throw po::error("--verify and --heaps apply to heaps; in continuous mode "
                        "(--timestamp-item) the stream ends at its stop heaps or Ctrl-C");
    if (!vm["full-queue-policy"].defaulted())
        throw po::error("--full-queue-policy applies to heaps; in continuous mode "
                        "(--timestamp-item) a network reader never waits: chunks the "
                        "consumer has no room for are lost whole, counted in "
                        "heaps_dropped_queue_full (docs/continuous.md)");
    recv::continuous_config c;
    c.timestamp_item = timestamp_item;
    c.timestamp_step = timestamp_step;
    c.substreams = substream_count;
    c.substream_item = substream_item;
    c.first_substream = first_substream;
    c.window_heaps = window_heaps;
    // The config's field names are the flags' with '-' for '_' (substreams: the count).
    try {
        c.substream_ids = substream_set::parse(substream_ids);
        if (!c.substream_ids.empty() && vm["substream-count"].defaulted())
            c.substreams = c.substream_ids.size();
        d_stream.set_continuous(c);
    } catch (const std::invalid_argument& e) {
        std::string text = e.what();
        const std::string field = text.substr(0, text.find(':'));
        std::string flag = field == "substreams" ? "substream-count" : field;
        for (char& ch : flag)
            ch = ch == '_' ? '-' : ch;
        throw po::error("--" + flag + text.substr(field.size()));
    }
}

recv::udp_config receiver_options::udp_config(const std::string& endpoints) const
{
    recv::udp_config c;
    c.set_endpoints(endpoints);
    if (ibv.bind)
        c.set_interface(*ibv.bind);
    if (buffer)
        c.set_buffer_size(*buffer);
    if (packet)
        c.set_max_size(*packet);
    return c;
}

recv::tcp_config receiver_options::tcp_config(const std::string& endpoint) const
{
    recv::tcp_config c;
    with_flag("SOURCE", [&] { c.set_endpoint(endpoint); });
    if (packet)
        with_flag("--packet", [&] { c.set_max_packet_size(*packet); });
    if (buffer)
        with_flag("--buffer", [&] { c.set_buffer_size(*buffer); });
    listen.apply(c);
    return c;
}

recv::rdma_config receiver_options::rdma_config(const std::string& endpoint) const
{
    recv::rdma_config c;
    with_flag("SOURCE", [&] { c.set_endpoint(endpoint); });
    if (ibv.bind)
        with_flag("--bind", [&] { c.set_interface(*ibv.bind); });
    if (packet)
        with_flag("--packet", [&] { c.set_max_packet_size(*packet); });
    listen.apply(c);
    return c;
}

recv::udp_ibv_config receiver_options::ibv_config(const std::string& endpoints) const
{
    recv::udp_ibv_config c;
    ibv.apply(c);
    if (buffer)
        with_flag("--buffer", [&] { c.set_buffer_size(*buffer); });
    if (packet)
        with_flag("--packet", [&] { c.set_max_size(*packet); });
    c.set_endpoints(endpoints);
    return c;
}

// ---- sender_options ------------------------------------------------------------------

void sender_options::add_to(po::options_description& options)
{
    // clang-format off
    options.add_options()
        ("heap-size", po::value(&generator.heap_size)->default_value(4194304), "payload per data heap (bytes)")
        ("items", po::value(&generator.items)->default_value(1), "items per heap")
        ("heaps", po::value(&generator.heaps)->default_value(-1), "data heaps to send (-1: until Ctrl-C)")
        ("packet", po::value(&packet)->default_value(1472), "largest SPEAD packet, the UDP payload (bytes)")
        ("addr-bits", po::value(&generator.addr_bits)->default_value(40), "heap address bits: SPEAD-64-XX flavour (40 or 48)")
        ("pyspead", po::bool_switch(&generator.pyspead), "encode descriptors with PySPEAD's field widths")
        ("rate", po::value(&rate_gbps)->default_value(0.0), "send rate of SPEAD packets (Gb/s; 0: as fast as possible)")
        ("burst", po::value(&burst)->default_value(65536), "bytes sent back-to-back before the rate limiter waits")
        ("burst-rate-ratio", po::value(&burst_rate_ratio)->default_value(send::stream_config::default_burst_rate_ratio), "the highest rate, relative to --rate, at which the sender catches up time it lost (as spead2_send's)")
        ("max-heaps", po::value(&generator.max_heaps)->default_value(4), "heaps in flight")
        ("ttl", po::value(&ttl)->default_value(1), "IP time-to-live");
    ibv.add_bind_to(options, "interface to send from: IPv4 address or netdev name (required with --ibv)");
    options.add_options()
        ("buffer", po::value(&buffer)->default_value(send::udp_config::default_buffer_size), "socket send buffer, or with --ibv the registered transmit ring (bytes)");
    ibv.add_to(options, "send", "with --ibv: completion-queue polls before waiting (default 10)");
    options.add_options()
        ("pcap", optional_value(pcap), "record to this capture file instead of sending")
        ("tcp", po::bool_switch(&tcp), "connect to the one DESTINATION and send SPEAD over TCP (spead2's framing, as spead2_send --tcp) instead of UDP")
        ("rdma", po::bool_switch(&rdma), "connect to the one DESTINATION (verbs://HOST:PORT) and send SPEAD over RDMA (an RC queue pair, rdma_cm); --packet defaults to 1 MiB + 4 KiB (a 1 MiB heap in one message); GR_SPEAD_RDMA_* apply")
        ("reconnect", po::bool_switch(&reconnect), "with --tcp or --rdma: when the connection is lost, connect again (waiting 0.1 s, doubling to 5 s, between attempts; heaps wait meanwhile) instead of failing every further heap")
        ("descriptors", po::bool_switch(&descriptors), "send a descriptor heap first (to every destination)")
        ("descriptor-interval", po::value(&generator.descriptor_interval)->default_value(0), "and again every N data heaps (implies --descriptors)")
        ("timestamp-item", po::value(&generator.timestamp_item)->default_value(0), "each data heap also carries this immediate item, in every packet: k × heap bytes (a timestamp counting int8 samples, for spead.source output_mode=continuous); 0: none")
        ("no-stop", po::bool_switch(&no_stop), "do not send a stop heap at the end")
        ("verify", po::bool_switch(&generator.verify), "fill items with spead2's --verify pattern, which spead_recv --verify and spead2_recv --verify check (costs CPU per heap)");
    // clang-format on
    output.add_to(options);
}

void sender_options::check()
{
    generator.descriptors = descriptors || generator.descriptor_interval > 0;
    generator.stop_heap = !no_stop;
    if (generator.heaps < -1)
        throw po::error("--heaps: " + std::to_string(generator.heaps) +
                        " is not a count; give N >= 0, or -1 to send until Ctrl-C");
    if (!std::isfinite(rate_gbps) || rate_gbps < 0)
        throw po::error("--rate: " + (std::ostringstream() << rate_gbps).str() +
                        " is not a rate; give Gb/s >= 0 (0: as fast as possible)");
    ibv.check("sends", "10.0.0.1");
    if (rdma && (tcp || ibv.ibv || pcap))
        throw po::error(std::string("--rdma and ") +
                        (tcp       ? "--tcp"
                         : ibv.ibv ? "--ibv"
                                   : "--pcap") +
                        ": give one; --rdma sends over an RDMA connection");
    if (rdma && packet == 1472)
        packet = recv::rdma_config::default_max_packet_size; // RC needs no MTU packets
    if (reconnect && !tcp && !rdma)
        throw po::error("--reconnect applies to connections: give --tcp or --rdma too");
    if (tcp && (ibv.ibv || pcap))
        throw po::error(std::string("--tcp and ") + (ibv.ibv ? "--ibv" : "--pcap") +
                        ": give one; --tcp sends over a TCP connection");
}

send::stream_config sender_options::stream_config() const
{
    send::stream_config config;
    with_flag("--packet", [&] {
        if (rdma)
            config.set_max_message_size(packet);
        else
            config.set_max_packet_size(packet);
    });
    config.set_rate(rate_gbps * 1e9 / 8);
    with_flag("--burst", [&] { config.set_burst_size(burst); });
    with_flag("--burst-rate-ratio",
              [&] { config.set_burst_rate_ratio(burst_rate_ratio); });
    with_flag("--max-heaps", [&] { config.set_max_heaps(generator.max_heaps); });
    // The generator refills the queue from its completion handlers: run them on the
    // writer thread, so that sending never waits for this thread to be scheduled.
    config.set_inline_completions(true);
    return config;
}

namespace {
/*! --ttl and --buffer, which kernel and ibverbs senders share. */
template <typename Config>
void set_ttl_and_buffer(const sender_options& o, Config& c)
{
    with_flag("--ttl", [&] { c.set_ttl(o.ttl); });
    with_flag("--buffer", [&] { c.set_buffer_size(o.buffer); });
}
} // namespace

send::udp_config sender_options::udp_config(const std::string& endpoints) const
{
    send::udp_config udp;
    set_ttl_and_buffer(*this, udp);
    if (ibv.bind)
        with_flag("--bind", [&] { udp.set_interface(*ibv.bind); });
    udp.set_endpoints(endpoints);
    return udp;
}

send::tcp_config sender_options::tcp_config(const std::string& endpoint) const
{
    send::tcp_config c;
    with_flag("--buffer", [&] { c.set_buffer_size(buffer); });
    if (ibv.bind)
        with_flag("--bind", [&] { c.set_interface(*ibv.bind); });
    c.set_endpoint(endpoint);
    c.set_reconnect(reconnect);
    return c;
}

send::rdma_config sender_options::rdma_config(const std::string& endpoint) const
{
    send::rdma_config c;
    if (ibv.bind)
        with_flag("--bind", [&] { c.set_interface(*ibv.bind); });
    c.set_endpoint(endpoint);
    c.set_reconnect(reconnect);
    return c;
}

send::udp_ibv_config sender_options::ibv_config(const std::string& endpoints) const
{
    send::udp_ibv_config c;
    set_ttl_and_buffer(*this, c);
    ibv.apply(c);
    // Destinations are checked last: a bad one is a runtime error (exit 1), like an
    // unreachable one.
    c.set_endpoints(endpoints);
    return c;
}

} // namespace apps
} // namespace spead
} // namespace gr
