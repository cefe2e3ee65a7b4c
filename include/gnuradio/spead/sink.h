/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SINK_H
#define INCLUDED_SPEAD_SINK_H

#include <gnuradio/block.h>
#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace gr {
namespace spead {

/*!
 * \brief Sends a tagged stream as SPEAD heaps.
 * \ingroup spead
 *
 * \details
 * With \p input_mode `heaps` (the default), one tagged-stream packet (a length tag
 * \p len_tag_key) becomes one heap; with an empty key, every \p heap_items items
 * do. The payload is one addressed item (\p payload_item).
 * Tags inside the packet become heap metadata:
 *  - `heap_cnt` (integer): the heap's cnt (otherwise \p heap_cnt_start, + \p
 *    heap_cnt_step per heap);
 *  - `0x1600`-style keys, or the name of an item the sink has a descriptor for (its own
 *    payload item, or descriptors received on the `descriptors` input port, e.g. from a
 *    spead.source), with an integer value: immediate items (a value wider than the
 *    flavour's 40 or 48 bits is not sent and is counted in tags_too_wide);
 *  - the length tag, `rx_time` and `heap_incomplete` are not sent; other tags are
 *    ignored (logged once per key).
 * So spead.source → spead.sink → spead.source carries heaps, cnts and tags unchanged.
 *
 * Descriptors (the payload item's, with a numpy dtype and the heap's shape, and those
 * received on `descriptors`) go out in a heap with STREAM_CTRL start before the first
 * heap, again every \p descriptor_interval heaps, and whenever they change. Control
 * heaps (descriptors, stop) take cnts counting down from the flavour's largest, so they
 * never collide with cnts taken from tags. With several endpoints, data heaps go
 * round-robin to them (one substream each); control heaps go to all.
 *
 * The payload is copied once into one of 8 send slots, so the flowgraph keeps running
 * while heaps are on the wire; when all slots are busy, work() waits (backpressure).
 * The upstream buffer must hold the largest packet (set its min output buffer to
 * twice the largest packet); a longer packet is dropped and counted
 * (packets_dropped_too_large).
 *
 * Message ports: `descriptors` (in: dicts as spead.source emits them) and `stats` (out:
 * a dict of every counter every \p stats_interval seconds while data flows).
 *
 * With \p input_mode `continuous` the input is a time series instead: each of the \p
 * substreams inputs is cut into heaps of \p heap_items items (the length tag is
 * ignored). Round k sends one heap from each input, input 0 first, each carrying the
 * immediates \p timestamp_item = start + k × \p timestamp_step and (when set) \p
 * substream_item = the input's index, repeated in every packet of the heap so that a
 * receiver can place any packet it meets first. start is \p start_timestamp, or comes
 * from an `rx_time` tag: round((secs + frac − \p sync_time) × \p sample_rate) for the
 * tagged item, from that heap on (from the next heap when the tag is not on a heap
 * boundary). Heap cnts are \p heap_cnt_start + j × \p heap_cnt_step over all heaps
 * (modulo the flavour's 2^40 or 2^48). Heaps of input i go to endpoint i modulo the
 * number of endpoints. Descriptors of the payload, the timestamp and the substream
 * items are made from these parameters. A timestamp wider than the flavour's
 * immediate is sent modulo 2^bits and counted (timestamps_wrapped); the block warns
 * when made if that happens within a day at \p sample_rate.
 */
class SPEAD_API sink : virtual public gr::block
{
public:
    typedef std::shared_ptr<sink> sptr;

    /*!
     * \brief Makes a SPEAD sink. Every bad value is logged and thrown as
     * std::invalid_argument (ValueError in Python) naming the parameter and the fix.
     *
     * \param transport `udp` (kernel sockets), `ibverbs` (raw-packet verbs on the NIC
     *        that owns \p interface: Mellanox/NVIDIA ConnectX; needs CAP_NET_RAW),
     *        `auto` (ibverbs when ibv::preflight finds it usable on \p interface,
     *        otherwise udp with a warning saying why), `pcap` (record into
     *        \p capture_file) or `tcp` (connect to a listening spead.source or
     *        spead2_recv --tcp: lossless, work() waits while the receiver is slow;
     *        docs/links.md).
     * \param endpoints destinations, one substream each: `239.1.2.3:7148,10.0.0.2:7148`
     *        or a range `239.1.2.3+3:7148` (four). Default `127.0.0.1:7148`. ibverbs:
     *        multicast groups, or unicast hosts whose MAC address the kernel's
     *        neighbour table knows. tcp: receivers (`HOST:PORT`) to connect to, one
     *        connection and substream each (the same one twice: two connections).
     * \param interface netdev name or IPv4 address. udp: the interface multicast
     *        leaves from; empty: the kernel's route (default). ibverbs and auto: the
     *        NIC's interface (required).
     * \param buffer_size udp: socket send buffer, bytes; 0 = 512 KiB (default).
     *        ibverbs: transmit ring, bytes; 0 = 512 KiB, cut into packet slots and
     *        clamped to the device's limits (a warning says so).
     * \param max_packet_size largest SPEAD packet (UDP payload), bytes (default 1472 for
     *        a 1500-byte MTU; 8972 for 9000). Never exceeded: IP never fragments.
     * \param item_type as spead.source: `complex_float`, `complex_int16`,
     *        `complex_int8`, `float`, `int32`, `int16`, `int8` (or `fc32`, `sc16`, `sc8`,
     *        `f32`, `s32`, `s16`, `s8`, `byte`).
     * \param vlen items per input vector, >= 1 (default 1).
     * \param payload_item id of the payload item, 0x06 < id, fits the flavour
     *        (default 0x1000, as spead2's first item).
     * \param len_tag_key key of the length tag (default `packet_len`); empty: every
     *        \p heap_items items form a heap.
     * \param heap_items items per heap when \p len_tag_key is empty; in continuous
     *        mode, items per heap per input (required).
     * \param ttl IP time-to-live, 0 to 255 (default 1: the local network).
     * \param rate_gbps send rate in Gb/s of SPEAD packets; 0 (default) = as fast as
     *        possible.
     * \param flavour `64-40` (default, as spead2) or `64-48`.
     * \param heap_cnt_start cnt of the first heap without a `heap_cnt` tag (default 1).
     * \param heap_cnt_step cnt increment, >= 1 (default 1).
     * \param descriptor_interval heaps between repeated descriptors; 0 (default) = only
     *        at the start and when they change.
     * \param payload_name name in the payload item's descriptor (default `payload`);
     *        empty = no descriptor for it.
     * \param payload_description description in the payload item's descriptor.
     * \param byte_order `as-is` (default: host order, which the descriptor's dtype
     *        states) or `swap` (the other order).
     * \param send_stop_heap send a stop heap to every substream at stop() (default
     *        true), which ends a spead.source's flowgraph.
     * \param capture_file pcap file the pcap transport writes (replaced).
     * \param stats_interval seconds between `stats` messages; 0 (default) = none.
     * \param comp_vector ibverbs: completion vector for send completions, taken modulo
     *        the device's vectors (default 0); negative = busy polling. Ignored by udp
     *        and pcap.
     * \param max_poll ibverbs: completion-queue polls before waiting, >= 1 (default
     *        10). Ignored by udp and pcap.
     * \param input_mode `heaps` (default: a heap per tagged packet, or per \p
     *        heap_items items; `tagged`, its old name, still works with a warning)
     *        or `continuous` (a timestamped time series; the parameters below apply
     *        to it only).
     * \param timestamp_item id of the immediate carrying each heap's timestamp
     *        (default 0x1600); not reserved, not \p payload_item.
     * \param timestamp_step timestamp increase from one heap of an input to the next;
     *        0 (default) = \p heap_items (timestamps count samples).
     * \param start_timestamp timestamp of the first heaps when no `rx_time` tag says
     *        otherwise (default 0); must fit the flavour's immediate.
     * \param sample_rate timestamps per second, to turn `rx_time` tags into timestamps
     *        and to foresee wraps; 0 (default) = `rx_time` tags are ignored (counted in
     *        rx_time_ignored).
     * \param sync_time UNIX time in seconds of timestamp 0 (default 0).
     * \param substreams number of inputs, 1 (default) to 256; more than 1 needs \p
     *        substream_item.
     * \param substream_item id of the immediate carrying the input index; 0 (default)
     *        = none (required with several substreams).
     * \param reconnect tcp: when the connection is lost, connect again with a bounded
     *        back-off (true) or end the flowgraph (false, default). Heaps queued when
     *        it was lost are counted (heaps_lost_in_flight). See docs/links.md.
     * \param connect_timeout tcp: seconds a connection attempt may take, > 0 (default
     *        5); a receiver that does not accept by then fails the attempt.
     * \param inline_bytes rdma: inline size requested for small messages, 0 to 4096
     *        bytes (default 64); the device's granted value is used.
     */
    static sptr make(const std::string& transport = "udp",
                     const std::string& endpoints = "127.0.0.1:7148",
                     const std::string& interface = "",
                     std::size_t buffer_size = 0,
                     std::size_t max_packet_size = 1472,
                     const std::string& item_type = "complex_float",
                     std::size_t vlen = 1,
                     std::uint64_t payload_item = 0x1000,
                     const std::string& len_tag_key = "packet_len",
                     std::size_t heap_items = 0,
                     int ttl = 1,
                     double rate_gbps = 0.0,
                     const std::string& flavour = "64-40",
                     std::uint64_t heap_cnt_start = 1,
                     std::uint64_t heap_cnt_step = 1,
                     std::size_t descriptor_interval = 0,
                     const std::string& payload_name = "payload",
                     const std::string& payload_description = "",
                     const std::string& byte_order = "as-is",
                     bool send_stop_heap = true,
                     const std::string& capture_file = "",
                     double stats_interval = 0.0,
                     int comp_vector = 0,
                     int max_poll = 10,
                     const std::string& input_mode = "heaps",
                     std::uint64_t timestamp_item = 0x1600,
                     std::uint64_t timestamp_step = 0,
                     std::uint64_t start_timestamp = 0,
                     double sample_rate = 0.0,
                     double sync_time = 0.0,
                     std::size_t substreams = 1,
                     std::uint64_t substream_item = 0,
                     bool reconnect = false,
                     double connect_timeout = 5.0,
                     std::size_t inline_bytes = 64);

    /*!
     * \brief Every counter of the current run (or of the last one after stop()), by
     * name: the send stream's (docs/statistics.md) and the block's data_heaps,
     * control_heaps, items_dropped_untagged, packets_dropped_too_large,
     * heaps_rejected and tags_too_wide; in continuous mode also timestamps_wrapped
     * and rx_time_ignored.
     */
    virtual std::map<std::string, std::uint64_t> stats() const = 0;
    /*! The transport in use: `udp`, `ibverbs` or `pcap` (what `auto` resolved to). */
    virtual std::string active_transport() const = 0;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SINK_H */
