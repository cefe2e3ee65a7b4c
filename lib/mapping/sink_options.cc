/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/shared_options.h"
#include "mapping/sink_options.h"
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

using routes = option_routes<sink_config>;
using rule = option_rule<sink_config>;
using k = option_kind;

/*! The connections to \p endpoints (comma-separated), one each, with the settings of
 * \p links' first (or the defaults). */
template <typename Link>
void connect_to(std::vector<Link>& links, const std::string& endpoints)
{
    const Link settings = links.empty() ? Link() : links.front();
    std::vector<Link> made;
    std::size_t begin = 0;
    while (begin <= endpoints.size()) {
        const std::size_t comma = std::min(endpoints.find(',', begin), endpoints.size());
        made.push_back(settings);
        // the config names its own parameter (endpoint); the block's is endpoints
        as_option("endpoints", "endpoint", [&] {
            made.back().set_endpoint(endpoints.substr(begin, comma - begin));
        });
        begin = comma + 1;
    }
    links = std::move(made);
}

void endpoints(sink_config& c, const std::string&, const option_value& v)
{
    using transport::endpoint_form;
    const std::string text = v.as_text("endpoints");
    const auto addresses = [&](const char* transport) {
        return endpoints_for<sink_config>(text, transport, endpoint_form::addresses);
    };
    routes::to(c, "udp", "endpoints", [&] {
        if (text.empty())
            throw std::invalid_argument("endpoints: empty; give where to send, e.g. "
                                        "127.0.0.1:7148, 239.1.2.3:7148 or a range "
                                        "239.1.2.3+3:7148");
        c.udp.set_endpoints(addresses("udp"));
    });
    routes::to(c, "ibverbs", "endpoints", [&] {
        c.ibverbs.set_endpoints(addresses("ibverbs"));
    });
    routes::to(c, "pcap", "endpoints", [&] {
        if (text.empty())
            throw std::invalid_argument("endpoints: empty; the pcap transport writes "
                                        "frames to these destinations, e.g. "
                                        "127.0.0.1:7148");
        // pcap writes to udp's endpoints
        send::udp_config().set_endpoints(addresses("pcap"));
    });
    routes::to(c, "tcp", "endpoints", [&] {
        if (text.empty())
            throw std::invalid_argument(
                "endpoints: empty; give the listening receiver to connect to, e.g. "
                "127.0.0.1:7148 or recv-host:7148");
        connect_to(c.tcp, addresses("tcp"));
    });
    routes::to(c, "rdma", "endpoints", [&] {
        if (text.empty())
            throw std::invalid_argument(
                "endpoints: empty; give the listening receiver to connect to, e.g. "
                "verbs://10.0.0.2:7150");
        connect_to(c.rdma,
                   endpoints_for<sink_config>(text, "rdma", endpoint_form::verbs));
    });
}

void interface(sink_config& c, const std::string&, const option_value& v)
{
    const std::string name = v.as_text("interface");
    routes::to(c, "udp", "interface", [&] { c.udp.set_interface(name); });
    routes::to(c, "ibverbs", "interface", [&] {
        if (!name.empty()) // settled at make() (see block_transport)
            c.ibverbs.set_interface(name);
    });
    set_on_links(c, "interface", [&](auto& link) {
        if (!name.empty())
            link.set_interface(name);
    });
}

void buffer_size(sink_config& c, const std::string&, const option_value& v)
{
    const std::size_t bytes = v.as_count("buffer_size");
    routes::to(c, "udp", "buffer_size", [&] { c.udp.set_buffer_size(bytes); });
    routes::to(c, "ibverbs", "buffer_size", [&] { c.ibverbs.set_buffer_size(bytes); });
    routes::to(c, "tcp", "buffer_size", [&] {
        for (auto& link : c.tcp)
            if (bytes != 0) // 0: the stream's default, as for udp
                link.set_buffer_size(bytes);
    });
}

const std::vector<rule>& rules()
{
    static const std::vector<rule> table = {
        transport_rule<sink_config>(),
        { describe("endpoints",
                   "General",
                   k::text,
                   "127.0.0.1:7148",
                   "Destinations, one substream each: 239.1.2.3:7148,10.0.0.2:7148 or a "
                   "range 239.1.2.3+3:7148 (four). ibverbs: multicast groups, or unicast "
                   "hosts whose MAC address the kernel's neighbour table knows. tcp: "
                   "receivers (HOST:PORT) to connect to, one connection and substream "
                   "each; rdma: verbs://HOST:PORT, likewise."),
          endpoints },
        { describe(
              "interface",
              "General",
              k::text,
              "",
              "Netdev name or IPv4 address. udp: the interface multicast leaves from; "
              "empty: the kernel's route. ibverbs and auto: the NIC's interface "
              "(required). tcp, rdma: the local interface to connect from."),
          interface },
        { describe("buffer_size",
                   "Rate and packets",
                   k::count,
                   0,
                   "udp: socket send buffer, bytes; 0 = 512 KiB. ibverbs: transmit ring, "
                   "bytes; 0 = 512 KiB, cut into packet slots and clamped to the "
                   "device's limits (a warning says so). tcp: socket buffer per "
                   "connection; 0 = 208 KiB, as spead2."),
          buffer_size },
        { describe("max_packet_size",
                   "Rate and packets",
                   k::count,
                   1472,
                   "Largest SPEAD packet (UDP payload), bytes: 1472 for a 1500-byte MTU, "
                   "8972 for 9000. Never exceeded: IP never fragments (refused at make() "
                   "when the route's MTU cannot carry it). rdma: the largest message, up "
                   "to 1 GiB; 1 MiB + 4 KiB when left at 1472."),
          // Up to rdma's 1 GiB here; the UDP payload's limit at make(), for datagrams.
          set_part<&sink_config::stream, &send::stream_config::set_max_message_size> },
        item_type_rule<sink_config>(),
        vlen_rule<sink_config>(),
        { describe("payload_item",
                   "Items",
                   k::count,
                   0x1000,
                   "Id of the payload item, above 0x15 and within the flavour (0x1000, "
                   "as spead2's first item)."),
          set_part<&sink_config::items, &sink_items::set_payload_item> },
        { describe("len_tag_key",
                   "Items",
                   k::text,
                   "packet_len",
                   "Key of the length tag: a heap per tagged packet; empty: every "
                   "heap_items items form a heap."),
          set_part<&sink_config::items, &sink_items::set_len_tag_key> },
        { describe("heap_items",
                   "Items",
                   k::count,
                   0,
                   "Items per heap when len_tag_key is empty; in continuous mode, items "
                   "per heap per input (required)."),
          set_part<&sink_config::items, &sink_items::set_heap_items> },
        { describe("ttl",
                   "Rate and packets",
                   k::integer,
                   1,
                   "IP time-to-live, 0 to 255 (1: the local network; 0 keeps multicast "
                   "on this host, and is refused for unicast destinations)."),
          [](sink_config& c, const std::string&, const option_value& v) {
              const int ttl = v.as_integer("ttl");
              routes::to(c, "udp", "ttl", [&] { c.udp.set_ttl(ttl); });
              routes::to(c, "ibverbs", "ttl", [&] { c.ibverbs.set_ttl(ttl); });
          } },
        { describe("rate_gbps",
                   "Rate and packets",
                   k::number,
                   0.0,
                   "Send rate in Gb/s of SPEAD packets; 0 = as fast as possible."),
          [](sink_config& c, const std::string&, const option_value& v) {
              const double gbps = v.as_number("rate_gbps");
              if (!std::isfinite(gbps) || gbps < 0)
                  throw std::invalid_argument("rate_gbps: " + std::to_string(gbps) +
                                              " is not a rate; give Gb/s >= 0 (0: as "
                                              "fast as possible)");
              c.stream.set_rate(gbps * 1e9 / 8.0);
          } },
        { describe("flavour", "Items", k::text, "64-40", "64-40 (as spead2) or 64-48."),
          set_part<&sink_config::items, &sink_items::set_flavour> },
        { describe("heap_cnt_start",
                   "Items",
                   k::count,
                   1,
                   "Cnt of the first heap without a heap_cnt tag."),
          set_part<&sink_config::items, &sink_items::set_heap_cnt_start> },
        { describe(
              "heap_cnt_step",
              "Items",
              k::count,
              1,
              "Cnt increment, >= 1 (several senders to one receiver: their number)."),
          set_part<&sink_config::items, &sink_items::set_heap_cnt_step> },
        { describe("descriptor_interval",
                   "Items",
                   k::count,
                   0,
                   "Heaps between repeated descriptors; 0 = only at the start and when "
                   "they change."),
          set_part<&sink_config::items, &sink_items::set_descriptor_interval> },
        { describe(
              "payload_name",
              "Items",
              k::text,
              "payload",
              "Name in the payload item's descriptor; empty = no descriptor for it."),
          set_part<&sink_config::items, &sink_items::set_payload_name> },
        { describe("payload_description",
                   "Items",
                   k::text,
                   "",
                   "Description in the payload item's descriptor."),
          set_part<&sink_config::items, &sink_items::set_payload_description> },
        { describe("byte_order",
                   "Items",
                   k::text,
                   "as-is",
                   "as-is (host order, which the descriptor's dtype states) or swap (the "
                   "other order)."),
          set_part<&sink_config::items, &sink_items::set_byte_order> },
        { describe("send_stop_heap",
                   "Items",
                   k::flag,
                   true,
                   "Send a stop heap to every substream at stop(), which ends a "
                   "spead.source's flowgraph."),
          set_config<&sink_config::set_send_stop_heap> },
        { describe("capture_file",
                   "General",
                   k::text,
                   "",
                   "pcap: the capture file written (replaced)."),
          set_config<&sink_config::set_capture_file> },
        stats_interval_rule<sink_config>(),
        metrics_rule<sink_config>(),
        comp_vector_rule<sink_config>(),
        max_poll_rule<sink_config>(),
        { describe(
              "input_mode",
              "General",
              k::text,
              "heaps",
              "heaps (a heap per tagged packet, or per heap_items items; tagged, its old "
              "name, still works with a warning) or continuous (a timestamped time "
              "series, cut into heaps of heap_items per input; docs/continuous.md)."),
          set_config<&sink_config::set_input_mode> },
        { describe("timestamp_item",
                   "Continuous",
                   k::count,
                   0x1600,
                   "Id of the immediate carrying each heap's timestamp; not reserved, "
                   "not payload_item."),
          set_field<&sink_config::continuous, &continuous_input::timestamp_item> },
        { describe("timestamp_step",
                   "Continuous",
                   k::count,
                   0,
                   "Timestamp increase from one heap of an input to the next; 0 = "
                   "heap_items (timestamps count samples)."),
          set_field<&sink_config::continuous, &continuous_input::timestamp_step> },
        { describe("start_timestamp",
                   "Continuous",
                   k::count,
                   0,
                   "Timestamp of the first heaps when no rx_time tag says otherwise; "
                   "must fit the flavour's immediate."),
          set_field<&sink_config::continuous, &continuous_input::start_timestamp> },
        { describe("sample_rate",
                   "Continuous",
                   k::number,
                   0.0,
                   "Timestamps per second, to turn rx_time tags into timestamps and to "
                   "foresee wraps; 0 = rx_time tags are ignored (counted in "
                   "rx_time_ignored)."),
          set_field<&sink_config::continuous, &continuous_input::sample_rate> },
        { describe("sync_time",
                   "Continuous",
                   k::number,
                   0.0,
                   "UNIX time in seconds of timestamp 0."),
          set_field<&sink_config::continuous, &continuous_input::sync_time> },
        { describe("substreams",
                   "Continuous",
                   k::count,
                   1,
                   "Inputs, 1 to 256; more than 1 needs substream_item."),
          set_field<&sink_config::continuous, &continuous_input::substreams> },
        { describe("substream_item",
                   "Continuous",
                   k::count,
                   0,
                   "Id of the immediate carrying the input index; 0 = none (required "
                   "with several substreams)."),
          set_field<&sink_config::continuous, &continuous_input::substream_item> },
        { describe("reconnect",
                   "Connections",
                   k::flag,
                   false,
                   "tcp, rdma: when the connection is lost, connect again with a bounded "
                   "back-off (True) or end the flowgraph (False). Heaps queued when it "
                   "was lost are counted (heaps_lost_in_flight)."),
          set_links<&send::tcp_config::set_reconnect,
                    &send::rdma_config::set_reconnect> },
        { describe("connect_timeout",
                   "Connections",
                   k::number,
                   5.0,
                   "tcp, rdma: seconds a connection attempt may take, > 0; a receiver "
                   "that does not accept by then fails the attempt."),
          set_links<&send::tcp_config::set_connect_timeout,
                    &send::rdma_config::set_connect_timeout> },
        { describe("inline_bytes",
                   "Connections",
                   k::count,
                   64,
                   "rdma: inline size requested for small messages, 0 to 4096 bytes; the "
                   "device's granted value is used."),
          [](sink_config& c, const std::string&, const option_value& v) {
              const std::size_t bytes = v.as_count("inline_bytes");
              routes::to(c, "rdma", "inline_bytes", [&] {
                  for (auto& link : c.rdma)
                      link.set_inline_bytes(bytes);
              });
          } },
    };
    return table;
}

} // namespace

const std::vector<option_rule<sink_config>>& sink_option_rules() { return rules(); }

} // namespace spead
} // namespace gr
