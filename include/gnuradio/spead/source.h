/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SOURCE_H
#define INCLUDED_SPEAD_SOURCE_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/source_config.h>
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
     * \brief Makes a SPEAD source from its config: the transport's, the stream's,
     * the continuous layout and the mapping between items and heaps, every option
     * already checked where it lives (source_config::options() lists them with their
     * defaults and documentation; docs/usage.md has the table). The options are
     * checked against each other here; a bad combination is logged and thrown as
     * std::invalid_argument (ValueError in Python) naming the option and the fix.
     *
     * From Python, `spead.source(transport="udp", endpoints=..., ...)` takes the
     * options as keywords (or a `spead.source_config`); GRC builds the config by
     * option name, as C++ may: `source::make(source_config({{"vlen", 4}}))`.
     */
    static sptr make(const source_config& config = source_config());

    /*!
     * \brief Every counter of the current run (or of the last one after stop()), by
     * name: the stream's counters (docs/statistics.md) and the block's
     * heaps_without_payload, heaps_dropped_partial_item,
     * heaps_dropped_too_large_for_output, heaps_output, bytes_output and
     * descriptors_type_mismatch (payload descriptors whose type contradicts
     * item_type).
     */
    virtual std::map<std::string, std::uint64_t> stats() const = 0;

    /*! Address:port each udp socket is bound to (one per distinct port; 0.0.0.0 when
     * several addresses share a port), or each endpoint an ibverbs flow steers; empty
     * for pcap or while stopped. */
    virtual std::vector<std::string> bound_endpoints() const = 0;

    /*! The transport in use: `udp`, `ibverbs`, `pcap`, `tcp` or `rdma` (what `auto` and
     * GR_SPEAD_IBV_INTERFACE resolved to). */
    virtual std::string active_transport() const = 0;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SOURCE_H */
