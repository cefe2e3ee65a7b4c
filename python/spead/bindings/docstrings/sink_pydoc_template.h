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
  Docstrings of the sink bindings, written by
  python/spead/bindings/docstrings_from_headers.py from the doxygen comments
  of include/gnuradio/spead/sink.h (qa_block_python_api checks they are
  current). Edit the header, then run that script.
 */

static const char* __doc_gr_spead_sink_sink_0 = R"doc()doc";

static const char* __doc_gr_spead_sink_sink_1 = R"doc()doc";

static const char* __doc_gr_spead_sink = R"doc(Sends a tagged stream as SPEAD heaps.

With input_mode `heaps` (the default), one tagged-stream packet (a length tag
len_tag_key) becomes one heap; with an empty key, every heap_items items
do. The payload is one addressed item (payload_item).
Tags inside the packet become heap metadata:
 - `heap_cnt` (integer): the heap's cnt (otherwise heap_cnt_start, + \p
   heap_cnt_step per heap);
 - `0x1600`-style keys, or the name of an item the sink has a descriptor for (its own
   payload item, or descriptors received on the `descriptors` input port, e.g. from a
   spead.source), with an integer value: immediate items (a value wider than the
   flavour's 40 or 48 bits is not sent and is counted in tags_too_wide);
 - the length tag, `rx_time` and `heap_incomplete` are not sent; other tags are
   ignored (logged once per key).
So spead.source → spead.sink → spead.source carries heaps, cnts and tags unchanged.

Descriptors (the payload item's, with a numpy dtype and the heap's shape, and those
received on `descriptors`) go out in a heap with STREAM_CTRL start before the first
heap, again every descriptor_interval heaps, and whenever they change. Control
heaps (descriptors, stop) take cnts counting down from the flavour's largest, so they
never collide with cnts taken from tags. With several endpoints, data heaps go
round-robin to them (one substream each); control heaps go to all.

The payload is copied once into one of 8 send slots, so the flowgraph keeps running
while heaps are on the wire; when all slots are busy, work() waits (backpressure).
A packet longer than the upstream buffer is taken in parts and sent as one heap:
no min output buffer needs setting. At stop() every destination gets a stop heap,
whatever was sent.

Message ports: `descriptors` (in: dicts as spead.source emits them) and `stats` (out:
a dict of every counter every stats_interval seconds while data flows).

With input_mode `continuous` the input is a time series instead: each of the \p
substreams inputs is cut into heaps of heap_items items (the length tag is
ignored). Round k sends one heap from each input, input 0 first, each carrying the
immediates timestamp_item = start + k × timestamp_step and (when set) \p
substream_item = the input's index, repeated in every packet of the heap so that a
receiver can place any packet it meets first. start is start_timestamp, or comes
from an `rx_time` tag: round((secs + frac − sync_time) × sample_rate) for the
tagged item, from that heap on (from the next heap when the tag is not on a heap
boundary). Heap cnts are heap_cnt_start + j × heap_cnt_step over all heaps
(modulo the flavour's 2^40 or 2^48). Heaps of input i go to endpoint i modulo the
number of endpoints. Descriptors of the payload, the timestamp and the substream
items are made from these parameters. A timestamp wider than the flavour's
immediate is sent modulo 2^bits and counted (timestamps_wrapped); the block warns
when made if that happens within a day at sample_rate.)doc";

static const char* __doc_gr_spead_sink_make = R"doc(Makes a SPEAD sink from its config: the transport's, the stream's,
the continuous layout and the mapping between items and heaps, every option
already checked where it lives (sink_config::options() lists them with their
defaults and documentation; docs/usage.md has the table). The options are
checked against each other here; a bad combination is logged and thrown as
std::invalid_argument (ValueError in Python) naming the option and the fix.

From Python, `spead.sink(transport="udp", endpoints=..., ...)` takes the
options as keywords (or a `spead.sink_config`); GRC builds the config by
option name, as C++ may: `sink::make(sink_config({{"vlen", 4}}))`.)doc";

static const char* __doc_gr_spead_sink_stats = R"doc(Every counter of the current run (or of the last one after stop()), by
name: the send stream's (docs/statistics.md) and the block's data_heaps,
control_heaps, items_dropped_untagged, packets_dropped_too_large,
heaps_rejected and tags_too_wide; in continuous mode also timestamps_wrapped
and rx_time_ignored.)doc";

static const char* __doc_gr_spead_sink_active_transport = R"doc(The transport in use: `udp`, `ibverbs`, `pcap`, `tcp` or `rdma` (what `auto`
resolved to).)doc";
