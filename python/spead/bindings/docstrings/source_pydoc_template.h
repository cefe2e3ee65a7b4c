/*
 * Copyright 2026 Free Software Foundation, Inc.
 *
 * This file is part of GNU Radio
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, spead, __VA_ARGS__)
/*
  Docstrings of the source bindings, written by
  python/spead/bindings/docstrings_from_headers.py from the doxygen comments
  of include/gnuradio/spead/source.h (qa_block_python_api checks they are
  current). Edit the header, then run that script.
 */

static const char* __doc_gr_spead_source_source_0 = R"doc()doc";

static const char* __doc_gr_spead_source_source_1 = R"doc()doc";

static const char* __doc_gr_spead_source = R"doc(Receives SPEAD heaps and outputs their payload as a tagged stream.

Each complete heap's stream payload (the chosen payload item, or all addressed items
except descriptors and NULL padding, concatenated in wire order) is copied once into
the output. Its first item carries the tags:
 - the length tag (key len_tag_key, default `packet_len`): items in this heap;
 - `heap_cnt` (uint64): the heap's cnt;
 - one tag per immediate item: key = the item's descriptor name when one was received,
   otherwise its id in hex (`0x1600`); value = the immediate as uint64;
 - `heap_incomplete` (uint64, bytes received) when incomplete heaps are delivered;
 - `rx_time` ((uint64 seconds, double fraction), as UHD) when timestamp_item is set:
   timestamp ÷ sample_rate + sync_time.

Message ports: `descriptors` (a dict per new or changed descriptor: id, name,
description, format, shape, numpy_header), `heaps` (every heap as a PDU: a metadata
dict and the stream payload bytes as received; built only when connected) and `stats`
(a dict of every counter, every stats_interval seconds).

Nothing is lost silently: see stats(). A heap whose payload is not a whole number of
items is dropped (heaps_dropped_partial_item); a heap without payload (descriptors,
control) gives no items (heaps_without_payload). The output buffer is sized to hold
two of the largest heap (max_heap_size), and work() waits for heaps rather than
returning empty-handed, so the scheduler never parks the block.

With output_mode `continuous` the output is instead a time series: each data heap
(one carrying timestamp_item) is placed by its timestamp, so output item n is
always time n. A heap that never arrives (or, under the drop policy, arrives
incomplete) is output as zeros, tagged `heap_missing` (uint64: items zero-filled) on
the first item of the zero-filled run; `rx_time` is tagged on the first item and after
every discontinuity (a timestamp jump beyond the window, as when the sender
restarts); `heap_incomplete` (uint64: bytes received) marks an incomplete heap output
under the deliver policy. No length tag. With substreams N the block has N
outputs and a heap goes to the output its substream_item names; all outputs
advance together. Each packet's payload is copied once, straight into a chunk that
work() copies to the outputs. See docs/continuous.md.

Sockets (udp) and the ibverbs queue pair are opened when the block is made, so bind
errors show at once and no packet sent after make() is missed; stop() closes them and a
later start() reopens them. A pcap capture is replayed from the start at each start();
the flowgraph ends (WORK_DONE) at its end, or at a stop heap when stop_on_stop_heap.)doc";

static const char* __doc_gr_spead_source_make = R"doc(Makes a SPEAD source. Every bad value is logged and thrown as
std::invalid_argument (ValueError in Python) naming the parameter and the fix.

Args:
    transport: `udp` (kernel sockets), `ibverbs` (raw-packet verbs on the NIC
        that owns interface: Mellanox/NVIDIA ConnectX; needs CAP_NET_RAW),
        `auto` (ibverbs when ibv::preflight finds it usable on interface,
        otherwise udp with a warning saying why), `pcap` (replay
        capture_file) or `tcp` (listen for SPEAD over TCP, as spead2_recv
        --tcp: lossless, senders pushed back; docs/links.md). The environment
        variable GR_SPEAD_IBV_INTERFACE turns every udp source into an ibverbs
        one on that interface (an interface given here wins), and
        GR_SPEAD_IBV_COMP_VECTOR then sets comp_vector.
    endpoints: udp/ibverbs: addresses to listen on,
        `239.1.2.3:7148,239.1.2.4:7148`, a range `239.1.2.3+3:7148` (four groups),
        `:7148` or `0.0.0.0:7148` (every local address, or for ibverbs every
        address of interface); multicast groups are joined. pcap: empty (replay
        every datagram) or `:port` (only datagrams to that UDP port). tcp: the one
        address to listen on, `HOST:PORT` or `:PORT` (every local address).
        Default `:7148`.
    interface: netdev name (`eth0`) or IPv4 address. udp: the interface that
        joins multicast groups; empty: the kernel's route (default). ibverbs and
        auto: the NIC's interface (required).
    buffer_size: udp: socket receive buffer, bytes; 0 = 8 MiB (default). The
        kernel caps it at net.core.rmem_max (a warning says so). ibverbs: receive
        ring, bytes; 0 = 16 MiB; cut into slots of max_packet_size + 42 bytes and
        clamped to the device's limits (a warning says so).
    max_packet_size: largest datagram accepted, bytes, 64 to 65507 (default
        9200); larger ones are counted in datagrams_oversize.
    item_type: stream item type: `complex_float` (`fc32`, 8 bytes),
        `complex_int16` (`sc16`, 4), `complex_int8` (`sc8`, 2), `float` (`f32`, 4),
        `int32` (`s32`, 4), `int16` (`s16`, 2), `int8` (`s8`, `byte`, 1).
    vlen: items per output vector, >= 1 (default 1).
    payload_item: id of the item that is the stream payload; 0 (default) = all
        addressed items except descriptors and NULL, concatenated.
    len_tag_key: key of the length tag (default `packet_len`); empty = none.
    max_heap_size: largest heap accepted, bytes (default 16 MiB); larger ones
        are dropped and counted (heaps_too_large). The output buffer holds two
        heaps this large.
    max_heaps: heaps assembled at once, >= 1 (default 4); raise it when several
        senders interleave their heaps.
    incomplete_heaps: `drop` (default: counted and freed) or `deliver`
        (zero-filled, tagged `heap_incomplete`).
    timestamp_item: id of the item holding a sample counter; 0 (default) = no
        `rx_time` tags.
    sample_rate: samples per second of the timestamp counter (> 0 when
        timestamp_item is set).
    sync_time: UNIX time in seconds of timestamp 0 (default 0).
    byte_order: `auto` (default: swap to host order what the item's descriptor
        says is in the other order, e.g. numpy `>i2`, or SPEAD format fields, which
        are big-endian), `as-is` or `swap` (each real component).
    stop_on_stop_heap: end the flowgraph (WORK_DONE) after a stop heap, once the
        heaps before it have been output (default true).
    capture_file: pcap or pcapng file replayed by the pcap transport.
    queue_heaps: completed heaps waiting for work(); a full queue drops the
        newest heap (heaps_dropped_queue_full). 0 (default) = 512 MiB worth of
        max_heap_size heaps (32 to 4096) for udp, 1 GiB worth (64 to 65536) for
        pcap, whose replay runs ahead of the flowgraph. Memory is taken only as
        heaps queue up.
    stats_interval: seconds between `stats` messages; 0 (default) = none.
    comp_vector: ibverbs: completion vector whose interrupt wakes the
        receiver, taken modulo the device's vectors (default 0); negative = busy
        polling (one core spins, lowest latency). Ignored by udp and pcap.
    max_poll: ibverbs: completion-queue polls per wake-up, or before
        yielding when busy polling, >= 1 (default 10). Ignored by udp and pcap.
    output_mode: `heaps` (default: one heap after another, each tagged with its
        length) or `continuous` (heaps placed by timestamp into a continuous
        series, gaps zero-filled and tagged; needs timestamp_item; the heap
        size, a whole number of output items, is learnt from the first data heap).
    timestamp_step: continuous: timestamp increase from one heap to the next;
        0 (default) = the output items per heap (timestamps that count samples).
    window_heaps: continuous: heaps (per substream) that may arrive out of
        order before a position is given up, 1 to 2^20 (default 64). Memory:
        about window_heaps × heap size × substreams, plus the queue.
    substreams: continuous: outputs, 1 to 1024 (default 1); a heap goes to the
        output substream_item names; one missing on one output is zero-filled
        there only.
    substream_item: continuous: id of the immediate item naming a heap's
        output; 0 (default) = none (required when substreams > 1).
    threads: receiver threads, 1 to 64 (default 1): the endpoints are split
        among them (udp: by port; ibverbs: one by one) and all place their packets
        into the same chunks. pcap: 1.
    full_queue_policy: heaps mode, when the queue (queue_heaps) is full:
        `drop` (default: the newest heap, counted in heaps_dropped_queue_full;
        a live stream never waits for the flowgraph) or `block` (spead2's: the
        receiver waits; datagrams wait in the socket buffer, and the kernel
        drops what does not fit, counted in packets_dropped_socket_overflow or
        runs_dropped_socket_overflow). pcap always waits: a replay loses nothing.
    first_substream: continuous: the substream of output 0 (default 0): the
        outputs carry substreams first_substream .. first_substream + substreams
        - 1 (this host's share of a sender's); heaps of other substreams are
        counted in heaps_other_substream. Needs substream_item when not 0.
    max_connections: tcp: senders connected at once, 1 to 1024 (default 1, as
        spead2); one more is refused and counted (connections_refused). Each
        sender should use its own heap cnts (a sink's heap_cnt_start/step).
    allowed_peers: tcp: addresses or networks allowed to connect,
        `10.0.0.0/24,192.168.1.7`; empty (default) = anyone. Others are refused,
        counted (connections_refused) and logged once per peer.
    keep_listening: tcp: when a sender's connection ends (closed or lost),
        keep listening for new senders (true) or end the stream once no sender is
        connected (false, default, as spead2). See docs/links.md.
    substream_ids: continuous: the substream of each output, in order (e.g.
        {8, 9, 10, 11} or {12, 3}), one per output (substreams of them),
        none twice; empty (default): first_substream's range. Give this or
        first_substream, not both. Needs substream_item.
    rdma_connections: rdma: connections that may use the RDMA-write path, 0
        (SendRecv only) to 1024 (default 4); the others use SendRecv.
    rdma_depth: rdma: RDMA writes in flight per such connection, 0 to 4096
        (default 8; 0 needs rdma_connections 0); more go by SendRecv, in order.)doc";

static const char* __doc_gr_spead_source_stats = R"doc(Every counter of the current run (or of the last one after stop()), by
name: the stream's counters (docs/statistics.md) and the block's
heaps_without_payload, heaps_dropped_partial_item and
heaps_dropped_too_large_for_output.)doc";

static const char* __doc_gr_spead_source_bound_endpoints = R"doc(Address:port each udp socket is bound to (one per distinct port; 0.0.0.0 when
several addresses share a port), or each endpoint an ibverbs flow steers; empty
for pcap or while stopped.)doc";

static const char* __doc_gr_spead_source_active_transport = R"doc(The transport in use: `udp`, `ibverbs` or `pcap` (what `auto` and
GR_SPEAD_IBV_INTERFACE resolved to).)doc";
