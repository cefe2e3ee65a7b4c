/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_HEAP_GENERATOR_H
#define INCLUDED_SPEAD_APPS_HEAP_GENERATOR_H

#include <gnuradio/spead/send_heap.h>
#include <gnuradio/spead/send_stream.h>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gr {
namespace spead {
namespace apps {

/*! What spead_send sends (and spead_bench's in-process sender). */
struct generator_config {
    std::size_t heap_size = 4194304; //!< payload per data heap (rounded as spead2 does)
    std::size_t items = 1;           //!< items per heap, ids 0x1000, 0x1001, ...
    int addr_bits = 40;              //!< SPEAD-64-XX
    bool pyspead = false;            //!< PySPEAD descriptor field widths
    bool verify = false;             //!< fill each heap with spead2's --verify pattern
    bool descriptors = false;        //!< a descriptor heap first (to every substream)
    std::uint64_t descriptor_interval = 0; //!< and again every N data heaps (0: never)
    bool stop_heap = true;                 //!< a stop heap to every substream at the end
    std::int64_t heaps = -1;               //!< data heaps; -1 until interrupted
    std::size_t max_heaps = 4;             //!< heaps in flight (the stream's queue size)
    std::uint64_t first_cnt = 1;           //!< heap cnt of the first heap sent
    /*! Every data heap from one zeroed buffer (not with verify), which stays in the
     * cache: a load generator costing a receiver under test the least. false: each
     * heap in flight has buffers of its own, as spead2_send's, so a sender that is
     * measured reads as much memory as a real one. */
    bool one_buffer = false;
    /*! With an id: data heap k also carries this immediate item = k × heap payload
     * bytes (modulo the immediate's width), in every packet (a digitiser's timestamp,
     * counting int8 samples), for continuous receivers. 0: none. */
    std::uint64_t timestamp_item = 0;
};

/*! How a run went. */
struct generator_result {
    std::uint64_t data_heaps = 0;    //!< data heaps sent without error
    std::uint64_t control_heaps = 0; //!< descriptor and stop heaps sent without error
    std::uint64_t heaps_failed = 0;  //!< heaps whose completion reported an error
    std::uint64_t bytes = 0;         //!< SPEAD packet bytes of the completed heaps
    double seconds = 0.0;            //!< first heap queued to last heap completed
    boost::system::error_code error; //!< the first error, if any
};

/*!
 * \brief Builds spead2_send-style heaps once and keeps a send stream busy with them.
 *
 * Data heaps carry `items` items of heap_size / items bytes each (rounded down to
 * whole 4-byte '>u4' elements, as spead2_send does); heap k goes to substream
 * k mod substreams. Up to max_heaps heaps are in flight, each with buffers of its own,
 * as spead2_send's (or all with one, one_buffer): zeroed once, or with verify refilled
 * with the pattern for its cnt; without verify the generator costs nothing per heap.
 */
class heap_generator
{
public:
    /*! \throws std::invalid_argument naming the option (`--items`, `--heap-size`,
     * `--addr-bits`, `--max-heaps`) for values that cannot make a heap */
    explicit heap_generator(const generator_config& config);

    /*! Payload bytes per item, and per data heap. */
    std::size_t item_size() const { return d_item_size; }
    std::size_t heap_payload() const { return d_item_size * d_config.items; }

    /*!
     * Sends the configured heaps on \p stream. Each completion queues the next heap:
     * on \p io (run here, on the calling thread), or on the stream's writer thread
     * when the stream completes inline (stream_config::set_inline_completions), which
     * keeps the writer fed without a thread switch per heap. Stops queueing data heaps
     * early when \p interrupted is set or a heap fails, then still sends the stop heap
     * (unless a heap failed) and waits for every heap in flight.
     */
    generator_result run(send::stream& stream,
                         boost::asio::io_context& io,
                         const std::atomic<bool>& interrupted);

private:
    struct slot;
    /*! (Re)builds \p sl's heap as data heap \p k. */
    void build_data_heap(slot& sl, std::uint64_t k) const;

    struct slot {
        explicit slot(const flavour& f) : heap(f) {}
        send::heap heap;
        std::vector<std::vector<std::uint8_t>> buffers; //!< one per item
        const slot* shared = nullptr; //!< one_buffer: the slot whose buffers it uses
        bool busy = false;
    };

    generator_config d_config;
    flavour d_flavour;
    std::size_t d_item_size = 0;
    std::vector<std::unique_ptr<slot>> d_slots;
    send::heap d_descriptor_heap;
    send::heap d_stop_heap;
};

} // namespace apps
} // namespace spead
} // namespace gr

#endif
