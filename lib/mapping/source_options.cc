/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/item_id_checks.h"
#include "mapping/shared_options.h"
#include "mapping/source_options.h"
#include <chrono>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

using routes = option_routes<source_config>;

constexpr char rdma[] = "rdma";

/*! pcap: `:PORT` (only that port's datagrams) or empty (every datagram). */
void capture_endpoints(source_config& c, const std::string& endpoints)
{
    routes::to(c, "pcap", "endpoints", [&] {
        std::uint16_t port = 0;
        if (!endpoints.empty()) {
            recv::udp_config ports;
            ports.set_endpoints(endpoints_for<source_config>(
                endpoints, "pcap", transport::endpoint_form::addresses));
            port = ports.get_endpoints().front().port();
            for (const auto& ep : ports.get_endpoints())
                if (ep.port() != port)
                    throw std::invalid_argument(
                        "endpoints: a capture is replayed for one UDP port at most; "
                        "give :PORT, or nothing to replay every datagram");
        }
        c.set_capture_port(port);
    });
}
using rule = option_rule<source_config>;
using k = option_kind;

/*! The block's default max_packet_size (for datagrams); rdma keeps its own then. */
constexpr std::size_t datagram_max_packet_size = 9200;

void endpoints(source_config& c, const std::string&, const option_value& v)
{
    using transport::endpoint_form;
    const std::string text = v.as_text("endpoints");
    const auto addresses = [&](const char* transport) {
        return endpoints_for<source_config>(text, transport, endpoint_form::addresses);
    };
    routes::to(c, "udp", "endpoints", [&] {
        if (text.empty())
            throw std::invalid_argument(
                "endpoints: empty; give where to listen, e.g. :7148 (every local "
                "address), 239.1.2.3:7148 or a range 239.1.2.3+3:7148");
        c.udp.set_endpoints(addresses("udp"));
    });
    routes::to(c, "ibverbs", "endpoints", [&] {
        c.ibverbs.set_endpoints(addresses("ibverbs"));
    });
    routes::to(c, "tcp", "endpoints", [&] {
        if (text.empty())
            throw std::invalid_argument(
                "endpoints: empty; give the address to listen on for TCP connections, "
                "e.g. :7148 (every local address) or 10.0.0.2:7148");
        const std::string where = addresses("tcp");
        as_option("endpoints", "endpoint", [&] { c.tcp.set_endpoint(where); });
    });
    routes::to(c, "rdma", "endpoints", [&] {
        const std::string where =
            endpoints_for<source_config>(text, "rdma", endpoint_form::verbs);
        as_option("endpoints", "endpoint", [&] { c.rdma.set_endpoint(where); });
    });
    capture_endpoints(c, text);
}

void interface(source_config& c, const std::string&, const option_value& v)
{
    const std::string name = v.as_text("interface");
    routes::to(c, "udp", "interface", [&] { c.udp.set_interface(name); });
    // ibverbs' interface is settled at make(), where GR_SPEAD_IBV_INTERFACE may give it.
    routes::to(c, "ibverbs", "interface", [&] {
        if (!name.empty())
            c.ibverbs.set_interface(name);
    });
    routes::to(c, "tcp", "interface", [&] {
        if (!name.empty())
            throw std::invalid_argument(
                "interface: '" + name +
                "' is not used by tcp, which listens on the address in endpoints; give "
                "that address there (e.g. 10.0.0.2:7148) and leave interface empty");
    });
    routes::to(c, "rdma", "interface", [&] {
        if (!name.empty())
            c.rdma.set_interface(name);
    });
}

void buffer_size(source_config& c, const std::string&, const option_value& v)
{
    const std::size_t bytes = v.as_count("buffer_size");
    routes::to(c, "udp", "buffer_size", [&] { c.udp.set_buffer_size(bytes); });
    routes::to(c, "ibverbs", "buffer_size", [&] { c.ibverbs.set_buffer_size(bytes); });
    routes::to(c, "tcp", "buffer_size", [&] {
        if (bytes != 0) // 0: the reader's default, as for udp
            c.tcp.set_buffer_size(bytes);
    });
}

void max_packet_size(source_config& c, const std::string&, const option_value& v)
{
    const std::size_t bytes = v.as_count("max_packet_size");
    routes::to(c, "udp", "max_packet_size", [&] {
        as_option("max_packet_size", "max_size", [&] { c.udp.set_max_size(bytes); });
    });
    routes::to(c, "ibverbs", "max_packet_size", [&] {
        as_option("max_packet_size", "max_size", [&] { c.ibverbs.set_max_size(bytes); });
    });
    routes::to(c, "tcp", "max_packet_size", [&] { c.tcp.set_max_packet_size(bytes); });
    // Left at the datagram default, rdma keeps its own (1 MiB + 4 KiB): RC needs no
    // MTU-sized packets.
    routes::to(c, "rdma", "max_packet_size", [&] {
        c.rdma.set_max_packet_size(bytes == datagram_max_packet_size
                                       ? recv::rdma_config::default_max_packet_size
                                       : bytes);
    });
}

const std::vector<rule>& rules()
{
    static const std::vector<rule> table = {
        transport_rule<source_config>(),
        { describe(
              "endpoints",
              "General",
              k::text,
              ":7148",
              "udp, ibverbs: addresses to listen on, 239.1.2.3:7148,239.1.2.4:7148, a "
              "range 239.1.2.3+3:7148 (four groups), :7148, 7148 or 0.0.0.0:7148 (every "
              "local address, or for ibverbs every address of interface); multicast "
              "groups are joined (the log names them and the interface). tcp: the one "
              "address to listen on, HOST:PORT or :PORT. rdma: "
              "verbs://ADDR:PORT or verbs://:PORT. pcap: empty (replay every datagram) "
              "or :PORT (only datagrams to that UDP port). udp also takes IPv6, as "
              "spead2: [::1]:7148, ff14::1:7148 (the last colon starts the port), "
              "[ff14::1]+3:7148, [::]:7148; ibverbs is IPv4 only."),
          endpoints },
        { describe("interface",
                   "General",
                   k::text,
                   "",
                   "Netdev name (eth0) or IPv4 address. udp: the interface that joins "
                   "multicast groups; empty: the kernel's route. ibverbs and auto: the "
                   "NIC's interface (required). rdma: the local interface to listen on "
                   "when endpoints names no address. Not used by tcp and pcap."),
          interface },
        { describe("buffer_size",
                   "Loss and buffers",
                   k::count,
                   0,
                   "udp: socket receive buffer, bytes; 0 = 8 MiB. The kernel caps it at "
                   "net.core.rmem_max (a warning says so). ibverbs: receive ring, bytes; "
                   "0 = 16 MiB, cut into slots of max_packet_size + 42 bytes and clamped "
                   "to the device's limits (a warning says so). tcp: socket buffer per "
                   "connection; 0 = 208 KiB, as spead2."),
          buffer_size },
        { describe("max_packet_size",
                   "Loss and buffers",
                   k::count,
                   9200,
                   "Largest datagram accepted, bytes, 64 to 65507; larger ones are "
                   "counted in datagrams_oversize. tcp: the largest packet on a "
                   "connection (up to 64 MiB); rdma: 1 MiB + 4 KiB when left at 9200."),
          max_packet_size },
        item_type_rule<source_config>(),
        vlen_rule<source_config>(),
        { describe("payload_item",
                   "Items",
                   k::count,
                   0,
                   "Id of the item that is the stream payload; 0 = every addressed item "
                   "except descriptors and NULL, concatenated. Heaps mode only."),
          set_part<&source_config::items, &source_items::set_payload_item> },
        { describe("len_tag_key",
                   "Items",
                   k::text,
                   "packet_len",
                   "Key of the length tag on each heap's first item; empty = none."),
          set_part<&source_config::items, &source_items::set_len_tag_key> },
        { describe("max_heap_size",
                   "Loss and buffers",
                   k::count,
                   16 * 1024 * 1024,
                   "Largest heap accepted, bytes; larger ones are dropped and counted "
                   "(heaps_too_large). The output buffer holds two heaps this large."),
          set_part<&source_config::stream, &recv::stream_config::set_max_heap_size> },
        { describe("max_heaps",
                   "Loss and buffers",
                   k::count,
                   4,
                   "Heaps assembled at once, >= 1; raise it when several senders "
                   "interleave their heaps."),
          set_part<&source_config::stream, &recv::stream_config::set_max_heaps> },
        { describe("incomplete_heaps",
                   "Loss and buffers",
                   k::text,
                   "drop",
                   "drop (counted and freed) or deliver (zero-filled, tagged "
                   "heap_incomplete)."),
          [](source_config& c, const std::string&, const option_value& v) {
              const std::string policy = v.as_text("incomplete_heaps");
              if (policy != "drop" && policy != "deliver")
                  throw std::invalid_argument("incomplete_heaps: '" + policy +
                                              "' is not a policy; use drop (count and "
                                              "free) or deliver (zero-filled, tagged "
                                              "heap_incomplete)");
              c.stream.set_incomplete_heaps(policy == "deliver"
                                                ? recv::incomplete_heaps::deliver
                                                : recv::incomplete_heaps::drop);
          } },
        { describe(
              "timestamp_item",
              "Items",
              k::count,
              0,
              "Id of the item holding a sample counter: rx_time tags (with sample_rate), "
              "and in continuous mode each heap's position; 0 = none."),
          [](source_config& c, const std::string&, const option_value& v) {
              c.items.set_timestamp_item(v.as_count("timestamp_item"));
              c.continuous.timestamp_item = c.items.get_timestamp_item();
          } },
        { describe("sample_rate",
                   "Items",
                   k::number,
                   0.0,
                   "Samples per second of the timestamp counter (> 0 when timestamp_item "
                   "is set, but for continuous mode without rx_time)."),
          set_part<&source_config::items, &source_items::set_sample_rate> },
        { describe("sync_time",
                   "Items",
                   k::number,
                   0.0,
                   "UNIX time in seconds of timestamp 0: rx_time = timestamp / "
                   "sample_rate + sync_time."),
          set_part<&source_config::items, &source_items::set_sync_time> },
        { describe("byte_order",
                   "Items",
                   k::text,
                   "auto",
                   "auto (swap to host order what the item's descriptor says is in the "
                   "other order, e.g. numpy >i2, or SPEAD format fields, which are "
                   "big-endian), as-is or swap (each real component)."),
          set_part<&source_config::items, &source_items::set_byte_order> },
        { describe("stop_on_stop_heap",
                   "Loss and buffers",
                   k::flag,
                   true,
                   "End the flowgraph (WORK_DONE) after a stop heap, once the heaps "
                   "before it have been output. tcp, rdma: a stop heap ends its "
                   "sender's connection; the flowgraph ends when no sender is left "
                   "(unless keep_listening)."),
          set_part<&source_config::stream, &recv::stream_config::set_stop_on_stop_heap> },
        { describe(
              "capture_file",
              "General",
              k::text,
              "",
              "pcap: the pcap or pcapng file replayed (from its start at each start())."),
          set_config<&source_config::set_capture_file> },
        { describe("queue_heaps",
                   "Loss and buffers",
                   k::count,
                   0,
                   "Completed heaps waiting for work(); a full queue drops the newest "
                   "heap (heaps_dropped_queue_full) or waits (full_queue_policy). 0 = "
                   "512 MiB worth of max_heap_size heaps (32 to 4096), 1 GiB worth (64 "
                   "to 65536) for pcap, whose replay runs ahead of the flowgraph. Memory "
                   "is taken only as heaps queue up."),
          set_config<&source_config::set_queue_heaps> },
        stats_interval_rule<source_config>(),
        metrics_rule<source_config>(),
        comp_vector_rule<source_config>(),
        max_poll_rule<source_config>(),
        { describe(
              "output_mode",
              "General",
              k::text,
              "heaps",
              "heaps (one heap after another, each tagged with its length) or continuous "
              "(heaps placed by timestamp into a continuous series, gaps zero-filled and "
              "tagged; needs timestamp_item; the heap size, a whole number of output "
              "items, is learnt from the first data heap). docs/continuous.md."),
          set_config<&source_config::set_output_mode> },
        { describe("timestamp_step",
                   "Continuous",
                   k::count,
                   0,
                   "Timestamp increase from one heap to the next; 0 = the output items "
                   "per heap (timestamps that count samples)."),
          set_field<&source_config::continuous,
                    &recv::continuous_config::timestamp_step> },
        { describe("window_heaps",
                   "Continuous",
                   k::count,
                   64,
                   "Heaps (per substream) that may arrive out of order before a position "
                   "is given up, 1 to 2^20. Memory: about window_heaps x heap size x "
                   "substreams, plus the queue."),
          set_field<&source_config::continuous, &recv::continuous_config::window_heaps> },
        { describe("substreams",
                   "Continuous",
                   k::count,
                   1,
                   "Outputs, 1 to 1024; a heap goes to the output substream_item names; "
                   "one missing on one output is zero-filled there only."),
          set_field<&source_config::continuous, &recv::continuous_config::substreams> },
        { describe("substream_item",
                   "Continuous",
                   k::count,
                   0,
                   "Id of the immediate item naming a heap's output; 0 = none (required "
                   "when substreams > 1)."),
          [](source_config& c, const std::string&, const option_value& v) {
              const std::uint64_t id = v.as_count("substream_item");
              check_source_item_id(
                  "substream_item",
                  id,
                  "0 (one substream) or the id of the immediate item naming "
                  "the substream");
              c.continuous.substream_item = id;
          } },
        { describe("threads",
                   "Advanced",
                   k::count,
                   1,
                   "Receiver threads, 1 to 64: udp and ibverbs split the endpoints among "
                   "them (udp: by port; ibverbs: one by one), and all place their "
                   "packets into the same chunks. tcp, rdma and pcap: 1."),
          set_config<&source_config::set_threads> },
        { describe(
              "full_queue_policy",
              "Loss and buffers",
              k::text,
              "drop",
              "Heaps mode, when the queue (queue_heaps) is full: drop (the newest heap, "
              "counted in heaps_dropped_queue_full; a live stream never waits for the "
              "flowgraph) or block (spead2's: the receiver waits; the socket buffer "
              "fills and the kernel's drops are counted). pcap always waits."),
          [](source_config& c, const std::string&, const option_value& v) {
              c.stream.set_full_queue_policy(
                  recv::full_queue_policy_from_name(v.as_text("full_queue_policy")));
          } },
        { describe("first_substream",
                   "Continuous",
                   k::count,
                   0,
                   "The substream of output 0: the outputs carry substreams "
                   "first_substream .. first_substream + substreams - 1 (this host's "
                   "share of a sender's); heaps of other substreams are counted in "
                   "heaps_other_substream. Needs substream_item when not 0."),
          set_field<&source_config::continuous,
                    &recv::continuous_config::first_substream> },
        { describe("max_connections",
                   "Connections",
                   k::count,
                   1,
                   "tcp, rdma: senders connected at once, 1 to 1024 (1, as spead2); one "
                   "more is refused and counted (connections_refused). Each sender "
                   "should use its own heap cnts (a sink's heap_cnt_start/step)."),
          set_links<&recv::tcp_config::set_max_connections,
                    &recv::rdma_config::set_max_connections> },
        { describe("allowed_peers",
                   "Connections",
                   k::text,
                   "",
                   "tcp, rdma: addresses or networks allowed to connect, "
                   "10.0.0.0/24,192.168.1.7; empty = anyone. Others are refused, counted "
                   "(connections_refused) and logged once per peer."),
          set_links<&recv::tcp_config::set_allowed_peers,
                    &recv::rdma_config::set_allowed_peers> },
        { describe("keep_listening",
                   "Connections",
                   k::flag,
                   false,
                   "tcp, rdma: when a sender's connection ends, keep listening for new "
                   "senders (True) or end the stream once no sender is connected (False, "
                   "as spead2)."),
          set_links<&recv::tcp_config::set_keep_listening,
                    &recv::rdma_config::set_keep_listening> },
        { describe("substream_ids",
                   "Continuous",
                   k::id_list,
                   std::vector<std::uint64_t>{},
                   "The substream of each output, in order (e.g. [8, 9, 10, 11], or text "
                   "8-11), one per output, none twice; empty = first_substream's range. "
                   "Give this or first_substream, not both. Needs substream_item."),
          set_field<&source_config::continuous,
                    &recv::continuous_config::substream_ids> },
        { describe("rdma_connections",
                   "Connections",
                   k::count,
                   4,
                   "rdma: connections that may use the RDMA-write path, 0 (SendRecv "
                   "only) to 1024; the others use SendRecv."),
          set_transport_part<rdma,
                             &source_config::rdma,
                             &recv::rdma_config::set_rdma_connections> },
        { describe("rdma_depth",
                   "Connections",
                   k::count,
                   8,
                   "rdma: RDMA writes in flight per such connection, 0 to 4096 (0 needs "
                   "rdma_connections 0); more go by SendRecv, in order."),
          set_transport_part<rdma,
                             &source_config::rdma,
                             &recv::rdma_config::set_rdma_depth> },
        { describe(
              "idle_timeout",
              "Connections",
              k::number,
              10.0,
              "tcp, rdma: seconds a connection may hold its slot without progress: to "
              "send its first whole packet after connecting "
              "(connections_idle_timeout), and to finish a packet it began "
              "(connections_partial_frame); then it is ended, freeing its slot. A "
              "sender idle between whole packets is not cut (peer_timeout finds dead "
              "ones). 0 = no bound, at most 600."),
          set_links<&recv::tcp_config::set_idle_timeout,
                    &recv::rdma_config::set_idle_timeout> },
    };
    return table;
}

} // namespace

const std::vector<option_rule<source_config>>& source_option_rules() { return rules(); }

} // namespace spead
} // namespace gr
