/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_PROTOCOL_ASSEMBLER_CONFIG_H
#define INCLUDED_SPEAD_PROTOCOL_ASSEMBLER_CONFIG_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_heap.h>
#include <gnuradio/spead/stats.h>
#include <cstddef>

namespace gr {
namespace spead {
namespace recv {

/*! Assembly limits; every one bounds memory or time under hostile input. */
struct SPEAD_API assembler_config {
    std::size_t max_heaps = 4;                    //!< live heaps (window)
    std::size_t max_heap_size = 64 * 1024 * 1024; //!< bytes; larger heaps are dropped
    incomplete_heaps incomplete = incomplete_heaps::drop;
    /*! A STREAM_CTRL stop heap flushes the live heaps and ends the stream; when false it
     * is only counted, and live heaps (perhaps another sender's) go on assembling. */
    bool stop_on_stop_heap = true;
    /*! With stop_on_stop_heap false, the stop heap is also delivered, as an ordinary
     * heap (spead2 does so: its consumer sees is_end_of_stream()); otherwise it is only
     * counted. */
    bool deliver_stop_heaps = false;
    /*! The counter of heaps delivered complete: heaps, or control_heaps where the
     * data heaps are placed elsewhere and counted there (continuous streams). */
    recv_stat heaps_stat = recv_stat::heaps;
    /*! Recently retired heap cnts remembered to catch duplicates and late packets of
     * heaps already delivered (single-packet heaps included). */
    std::size_t retired_history = 64;
    /*! Separate received ranges per heap; 0: automatic (fragment_limit::choose() of
     * max_heap_size). */
    std::size_t max_fragments = 0;
    /*! Item pointers per heap. */
    std::size_t max_item_pointers = 65536;
    /*! Windows of max_heaps live heaps each, a heap's chosen by its cnt modulo
     * substreams (spead2's substreams): a heap is evicted only by newer heaps of its
     * own window. */
    std::size_t substreams = 1;
    /*! Heaps without HEAP_SIZE are assembled (their extent is their size); false: a
     * packet without HEAP_SIZE is rejected (packets_unsized). */
    bool allow_unsized_heaps = true;
    /*! Packets of a heap are placed in any order; false (spead2's default): a heap
     * starts with its first bytes (offset 0) and each packet must continue where the
     * heap's bytes end (others: packets_out_of_order). */
    bool allow_out_of_order = true;
    /*! Payloads are copied with non-temporal stores (memcpy_nontemporal()). */
    bool nontemporal_copies = false;

    /*! \throws std::invalid_argument naming the field and the fix */
    void validate() const;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_PROTOCOL_ASSEMBLER_CONFIG_H */
