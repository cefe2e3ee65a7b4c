/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STREAMS_PACKET_BATCH_H
#define INCLUDED_SPEAD_STREAMS_PACKET_BATCH_H

#include "protocol/packet_writer.h"
#include "protocol/packetiser.h"
#include "rate_limiter.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/send_stream.h>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace gr {
namespace spead {
namespace send {
namespace detail {

/*! Where send_heap() waits for its heap (on its own stack: nothing allocated). */
struct heap_waiter {
    bool done = false;
    boost::system::error_code ec;
    std::size_t bytes = 0;
};

/*! A heap in a send stream's queue. Producers fill it under the queue's mutex; once
 * queued only the writer thread touches it until it completes. */
struct queued_heap {
    std::optional<packet_generator> generator;
    std::size_t substream = 0;
    /*! On the first heap of a round-robin group (stream::async_send_heaps): the heaps
     * of the group, it and the ones queued after it, whose packets interleave. */
    std::size_t round_robin_group = 0;
    stream::completion_handler handler;
    heap_waiter* waiter = nullptr;
    // writer progress
    bool all_cut = false;         //!< every packet written or abandoned
    std::uint64_t done_after = 0; //!< completions that finish it
    std::size_t bytes = 0;
    boost::system::error_code ec;

    /*! Empty again for the next heap (the generator holds a reference, so the entry
     * cannot simply be assigned). */
    void reset();
};

/*!
 * \brief The writer thread's batches: packets cut from queued heaps, paced by the rate
 * limiter and handed to the transport at once, and what each heap of a batch got out.
 *
 * Writer thread only. Heaps come from \p next_heap (null: the queue has no heap the
 * writer has not begun); a heap too long for one batch goes on in the next.
 */
class packet_batch
{
public:
    /*! Counters of written batches not yet added to the stream's stats. */
    struct counts {
        std::uint64_t packets = 0;
        std::uint64_t bytes = 0;
        std::uint64_t failed = 0;
        std::uint64_t rate_limit_waits = 0;
    };

    packet_batch(const stream_config& config, std::function<queued_heap*()> next_heap);

    /*! Cuts the next batch: packets of the heaps being cut, then of the heaps
     * next_heap gives, up to a full batch (or half a burst when rate limited). The
     * heaps of a round-robin group are cut together, one packet of each in turn.
     * \return its packets (0: nothing to cut; spans() may still hold a heap whose
     * last packets went in the batch before). */
    std::size_t fill();
    /*! The last fill() touched a heap: write() must run even for 0 packets. */
    bool has_heaps() const { return !d_spans.empty(); }
    /*! Waits for the rate limiter, writes the \p n packets of fill() through \p writer,
     * and records in each heap the bytes that went out, the completions that finish
     * it, and the error that ends it when part of it did not go out. */
    void write(std::size_t n, packet_writer& writer);

    /*! Packets the transport has accepted so far (its completions count up to it). */
    std::uint64_t accepted() const { return d_packets_accepted; }
    /*! A heap is partly cut. */
    bool cutting() const { return !d_active.empty(); }
    /*! The counters of the batches written since the last call, and zero. */
    counts take_counts();

    bool rate_limited() const { return d_limiter.has_value(); }
    /*! The writer has nothing to send: idle time is not caught up. */
    void note_idle();

private:
    /*! A heap with packets in a batch: the last of them, and whether it is the
     * heap's last packet. */
    struct span {
        queued_heap* heap;
        std::size_t last;
        bool finishes_heap;
    };
    /*! The span of \p e in this batch, made if \p e has none yet. */
    span& span_of(queued_heap& e);
    /*! \p e leaves the heaps being cut (cut whole, or failed). */
    void retire(queued_heap& e);

    const std::size_t d_max_packet_size;
    std::function<queued_heap*()> d_next_heap;
    gr::logger d_logger;
    std::vector<std::uint8_t> d_headers; //!< packet headers of one batch
    std::vector<packet_piece> d_pieces;  //!< pieces of one batch, in packet order
    std::vector<packet> d_packets;
    std::vector<std::size_t> d_piece_begin;
    std::vector<queued_heap*> d_packet_heap; //!< the heap of each packet of a batch
    std::vector<span> d_spans;
    std::vector<queued_heap*> d_active; //!< heaps being cut: one, or a group's
    std::size_t d_turn = 0;             //!< in d_active: whose packet is next
    std::uint64_t d_packets_accepted = 0;
    std::optional<rate_limiter> d_limiter;
    counts d_counts;
};

} // namespace detail
} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_PACKET_BATCH_H */
