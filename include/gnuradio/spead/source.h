/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SOURCE_H
#define INCLUDED_SPEAD_SOURCE_H

#include <gnuradio/spead/api.h>
#include <gnuradio/sync_block.h>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief Receives SPEAD heaps and outputs their payload as a tagged stream.
 * \ingroup spead
 *
 * \details
 * Each complete heap's stream payload (the chosen payload item, or all addressed items
 * except descriptors and NULL padding, concatenated in wire order) is copied once into
 * the output. Its first item carries the tags:
 *  - the length tag (key \p len_tag_key, default `packet_len`): items in this heap;
 *  - `heap_cnt` (uint64): the heap's cnt;
 *  - one tag per immediate item: key = the item's descriptor name when one was received,
 *    otherwise its id in hex (`0x1600`); value = the immediate as uint64;
 *  - `heap_incomplete` (uint64, bytes received) when incomplete heaps are delivered;
 *  - `rx_time` ((uint64 seconds, double fraction), as UHD) when \p timestamp_item is set:
 *    timestamp ÷ \p sample_rate + \p sync_time.
 *
 * Message ports: `descriptors` (a dict per new or changed descriptor: id, name,
 * description, format, shape, numpy_header), `heaps` (every heap as a PDU: a metadata
 * dict and the stream payload bytes as received; built only when connected) and `stats`
 * (a dict of every counter, every \p stats_interval seconds).
 *
 * Nothing is lost silently: see stats(). A heap whose payload is not a whole number of
 * items is dropped (heaps_dropped_partial_item); a heap without payload (descriptors,
 * control) gives no items (heaps_without_payload). The output buffer is sized to hold
 * two of the largest heap (\p max_heap_size), and work() waits for heaps rather than
 * returning empty-handed, so the scheduler never parks the block.
 *
 * With \p output_mode `continuous` the output is instead a time series: each data heap
 * (one carrying \p timestamp_item) is placed by its timestamp, so output item n is
 * always time n. A heap that never arrives (or, under the drop policy, arrives
 * incomplete) is output as zeros, tagged `heap_missing` (uint64: items zero-filled) on
 * the first item of the zero-filled run; `rx_time` is tagged on the first item and after
 * every discontinuity (a timestamp jump beyond the window, as when the sender
 * restarts); `heap_incomplete` (uint64: bytes received) marks an incomplete heap output
 * under the deliver policy. No length tag. With \p substreams N the block has N
 * outputs and a heap goes to the output its \p substream_item names; all outputs
 * advance together. Each packet's payload is copied once, straight into a chunk that
 * work() copies to the outputs. See docs/continuous.md.
 *
 * Sockets (udp) and the ibverbs queue pair are opened when the block is made, so bind
 * errors show at once and no packet sent after make() is missed; stop() closes them and a
 * later start() reopens them. A pcap capture is replayed from the start at each start();
 * the flowgraph ends (WORK_DONE) at its end, or at a stop heap when \p stop_on_stop_heap.
 */
class SPEAD_API source : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<source> sptr;

    /*!
     * \brief Makes a SPEAD source. Every bad value is logged and thrown as
     * std::invalid_argument (ValueError in Python) naming the parameter and the fix.
     *
     * \param transport `udp` (kernel sockets), `ibverbs` (raw-packet verbs on the NIC
     *        that owns \p interface: Mellanox/NVIDIA ConnectX; needs CAP_NET_RAW),
     *        `auto` (ibverbs when ibv::preflight finds it usable on \p interface,
     *        otherwise udp with a warning saying why), `pcap` (replay
     *        \p capture_file) or `tcp` (listen for SPEAD over TCP, as spead2_recv
     *        --tcp: lossless, senders pushed back; docs/links.md). The environment
     *        variable GR_SPEAD_IBV_INTERFACE turns every udp source into an ibverbs
     *        one on that interface (an interface given here wins), and
     *        GR_SPEAD_IBV_COMP_VECTOR then sets \p comp_vector.
     * \param endpoints udp/ibverbs: addresses to listen on,
     *        `239.1.2.3:7148,239.1.2.4:7148`, a range `239.1.2.3+3:7148` (four groups),
     *        `:7148` or `0.0.0.0:7148` (every local address, or for ibverbs every
     *        address of \p interface); multicast groups are joined. pcap: empty (replay
     *        every datagram) or `:port` (only datagrams to that UDP port). tcp: the one
     *        address to listen on, `HOST:PORT` or `:PORT` (every local address).
     *        Default `:7148`.
     * \param interface netdev name (`eth0`) or IPv4 address. udp: the interface that
     *        joins multicast groups; empty: the kernel's route (default). ibverbs and
     *        auto: the NIC's interface (required).
     * \param buffer_size udp: socket receive buffer, bytes; 0 = 8 MiB (default). The
     *        kernel caps it at net.core.rmem_max (a warning says so). ibverbs: receive
     *        ring, bytes; 0 = 16 MiB; cut into slots of max_packet_size + 42 bytes and
     *        clamped to the device's limits (a warning says so).
     * \param max_packet_size largest datagram accepted, bytes, 64 to 65507 (default
     *        9200); larger ones are counted in datagrams_oversize.
     * \param item_type stream item type: `complex_float` (`fc32`, 8 bytes),
     *        `complex_int16` (`sc16`, 4), `complex_int8` (`sc8`, 2), `float` (`f32`, 4),
     *        `int32` (`s32`, 4), `int16` (`s16`, 2), `int8` (`s8`, `byte`, 1).
     * \param vlen items per output vector, >= 1 (default 1).
     * \param payload_item id of the item that is the stream payload; 0 (default) = all
     *        addressed items except descriptors and NULL, concatenated.
     * \param len_tag_key key of the length tag (default `packet_len`); empty = none.
     * \param max_heap_size largest heap accepted, bytes (default 16 MiB); larger ones
     *        are dropped and counted (heaps_too_large). The output buffer holds two
     *        heaps this large.
     * \param max_heaps heaps assembled at once, >= 1 (default 4); raise it when several
     *        senders interleave their heaps.
     * \param incomplete_heaps `drop` (default: counted and freed) or `deliver`
     *        (zero-filled, tagged `heap_incomplete`).
     * \param timestamp_item id of the item holding a sample counter; 0 (default) = no
     *        `rx_time` tags.
     * \param sample_rate samples per second of the timestamp counter (> 0 when
     *        \p timestamp_item is set).
     * \param sync_time UNIX time in seconds of timestamp 0 (default 0).
     * \param byte_order `auto` (default: swap to host order what the item's descriptor
     *        says is in the other order, e.g. numpy `>i2`, or SPEAD format fields, which
     *        are big-endian), `as-is` or `swap` (each real component).
     * \param stop_on_stop_heap end the flowgraph (WORK_DONE) after a stop heap, once the
     *        heaps before it have been output (default true).
     * \param capture_file pcap or pcapng file replayed by the pcap transport.
     * \param queue_heaps completed heaps waiting for work(); a full queue drops the
     *        newest heap (heaps_dropped_queue_full). 0 (default) = 512 MiB worth of
     *        \p max_heap_size heaps (32 to 4096) for udp, 1 GiB worth (64 to 65536) for
     *        pcap, whose replay runs ahead of the flowgraph. Memory is taken only as
     *        heaps queue up.
     * \param stats_interval seconds between `stats` messages; 0 (default) = none.
     * \param comp_vector ibverbs: completion vector whose interrupt wakes the
     *        receiver, taken modulo the device's vectors (default 0); negative = busy
     *        polling (one core spins, lowest latency). Ignored by udp and pcap.
     * \param max_poll ibverbs: completion-queue polls per wake-up, or before
     *        yielding when busy polling, >= 1 (default 10). Ignored by udp and pcap.
     * \param output_mode `heaps` (default: one heap after another, each tagged with its
     *        length) or `continuous` (heaps placed by timestamp into a continuous
     *        series, gaps zero-filled and tagged; needs \p timestamp_item; the heap
     *        size, a whole number of output items, is learnt from the first data heap).
     * \param timestamp_step continuous: timestamp increase from one heap to the next;
     *        0 (default) = the output items per heap (timestamps that count samples).
     * \param window_heaps continuous: heaps (per substream) that may arrive out of
     *        order before a position is given up, 1 to 2^20 (default 64). Memory:
     *        about window_heaps × heap size × substreams, plus the queue.
     * \param substreams continuous: outputs, 1 to 1024 (default 1); a heap goes to the
     *        output \p substream_item names; one missing on one output is zero-filled
     *        there only.
     * \param substream_item continuous: id of the immediate item naming a heap's
     *        output; 0 (default) = none (required when substreams > 1).
     * \param threads receiver threads, 1 to 64 (default 1): the endpoints are split
     *        among them (udp: by port; ibverbs: one by one) and all place their packets
     *        into the same chunks. pcap: 1.
     * \param full_queue_policy heaps mode, when the queue (queue_heaps) is full:
     *        `drop` (default: the newest heap, counted in heaps_dropped_queue_full;
     *        a live stream never waits for the flowgraph) or `block` (spead2's: the
     *        receiver waits; datagrams wait in the socket buffer, and the kernel
     *        drops what does not fit, counted in packets_dropped_socket_overflow or
     *        runs_dropped_socket_overflow). pcap always waits: a replay loses nothing.
     * \param first_substream continuous: the substream of output 0 (default 0): the
     *        outputs carry substreams first_substream .. first_substream + substreams
     *        - 1 (this host's share of a sender's); heaps of other substreams are
     *        counted in heaps_other_substream. Needs \p substream_item when not 0.
     * \param max_connections tcp: senders connected at once, 1 to 1024 (default 1, as
     *        spead2); one more is refused and counted (connections_refused). Each
     *        sender should use its own heap cnts (a sink's heap_cnt_start/step).
     * \param allowed_peers tcp: addresses or networks allowed to connect,
     *        `10.0.0.0/24,192.168.1.7`; empty (default) = anyone. Others are refused,
     *        counted (connections_refused) and logged once per peer.
     * \param keep_listening tcp: when a sender's connection ends (closed or lost),
     *        keep listening for new senders (true) or end the stream once no sender is
     *        connected (false, default, as spead2). See docs/links.md.
     * \param substream_ids continuous: the substream of each output, in order (e.g.
     *        {8, 9, 10, 11} or {12, 3}), one per output (\p substreams of them),
     *        none twice; empty (default): first_substream's range. Give this or
     *        first_substream, not both. Needs \p substream_item.
     * \param rdma_connections rdma: connections that may use the RDMA-write path, 0
     *        (SendRecv only) to 1024 (default 4); the others use SendRecv.
     * \param rdma_depth rdma: RDMA writes in flight per such connection, 0 to 4096
     *        (default 8; 0 needs rdma_connections 0); more go by SendRecv, in order.
     */
    static sptr make(const std::string& transport = "udp",
                     const std::string& endpoints = ":7148",
                     const std::string& interface = "",
                     std::size_t buffer_size = 0,
                     std::size_t max_packet_size = 9200,
                     const std::string& item_type = "complex_float",
                     std::size_t vlen = 1,
                     std::uint64_t payload_item = 0,
                     const std::string& len_tag_key = "packet_len",
                     std::size_t max_heap_size = 16 * 1024 * 1024,
                     std::size_t max_heaps = 4,
                     const std::string& incomplete_heaps = "drop",
                     std::uint64_t timestamp_item = 0,
                     double sample_rate = 0.0,
                     double sync_time = 0.0,
                     const std::string& byte_order = "auto",
                     bool stop_on_stop_heap = true,
                     const std::string& capture_file = "",
                     std::size_t queue_heaps = 0,
                     double stats_interval = 0.0,
                     int comp_vector = 0,
                     int max_poll = 10,
                     const std::string& output_mode = "heaps",
                     std::uint64_t timestamp_step = 0,
                     std::size_t window_heaps = 64,
                     std::size_t substreams = 1,
                     std::uint64_t substream_item = 0,
                     std::size_t threads = 1,
                     const std::string& full_queue_policy = "drop",
                     std::uint64_t first_substream = 0,
                     std::size_t max_connections = 1,
                     const std::string& allowed_peers = "",
                     bool keep_listening = false,
                     const std::vector<std::uint64_t>& substream_ids = {},
                     std::size_t rdma_connections = 4,
                     std::size_t rdma_depth = 8);

    /*!
     * \brief Every counter of the current run (or of the last one after stop()), by
     * name: the stream's counters (docs/statistics.md) and the block's
     * heaps_without_payload, heaps_dropped_partial_item and
     * heaps_dropped_too_large_for_output.
     */
    virtual std::map<std::string, std::uint64_t> stats() const = 0;

    /*! Address:port each udp socket is bound to (one per distinct port; 0.0.0.0 when
     * several addresses share a port), or each endpoint an ibverbs flow steers; empty
     * for pcap or while stopped. */
    virtual std::vector<std::string> bound_endpoints() const = 0;

    /*! The transport in use: `udp`, `ibverbs` or `pcap` (what `auto` and
     * GR_SPEAD_IBV_INTERFACE resolved to). */
    virtual std::string active_transport() const = 0;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SOURCE_H */
