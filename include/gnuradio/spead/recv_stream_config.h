/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_STREAM_CONFIG_H
#define INCLUDED_SPEAD_RECV_STREAM_CONFIG_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/config_setter.h>
#include <gnuradio/spead/continuous_layout.h>
#include <gnuradio/spead/memory_allocator.h>
#include <gnuradio/spead/recv_heap.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

struct chunk_stream_setup; // recv_chunk_stream.h

/*!
 * \brief A time-continuous stream (spead.source output_mode continuous): data heaps,
 * the ones carrying \p timestamp_item, are placed by timestamp into chunks
 * (recv::chunk) instead of being assembled into heaps; see docs/continuous.md. The
 * layout fields (timestamp_item, timestamp_step, substreams, substream_item,
 * item_bytes: every heap's size must be a whole number of items) are
 * continuous_layout's, shared with spead.sink's continuous input.
 */
struct SPEAD_API continuous_config : continuous_layout {
    /*! Positions that may fill at once, per substream (default 64). */
    std::size_t window_heaps = 64;
    /*! Positions waiting for the consumer; 0: as many as queue_bytes hold. */
    std::size_t queue_positions = 0;
    /*! Memory for positions waiting for the consumer when queue_positions is 0. */
    std::size_t queue_bytes = std::size_t(256) << 20;
    /*! Positions per chunk; 0: automatic (about 1 MiB per substream). */
    std::size_t chunk_positions = 0;
    /*! The substream (value of substream_item) of output 0: this receiver takes
     * substreams first_substream .. first_substream + substreams - 1, and counts
     * heaps of the others in heaps_other_substream (default 0). Needs
     * substream_item when not 0. */
    std::uint64_t first_substream = 0;
    /*! Or the substreams of the outputs one by one, in output order (e.g. 8, 9, 10,
     * 11 or 12, 3): one id per substream, none twice; first_substream then stays 0.
     * Empty (default): first_substream's range. See substream_set. */
    std::vector<std::uint64_t> substream_ids;

    /*! \throws std::invalid_argument naming the field, the value and the fix */
    void validate() const;
};

/*!
 * \brief What a network reader does when the heap queue is full
 * (stream_config::set_full_queue_policy()). A capture replay always waits: a file
 * never loses heaps to a slow consumer.
 */
enum class full_queue_policy {
    /*! The reader waits for the consumer, as spead2's does: datagrams then wait in the
     * socket buffer (buffer_size), and what does not fit there is dropped by the kernel
     * and counted (packets_dropped_socket_overflow / runs_dropped_socket_overflow;
     * with ibverbs frames_dropped_no_buffer). Each wait counts reader_waits_queue_full.
     */
    block,
    /*! The newest heap is dropped and counted (heaps_dropped_queue_full): the reader
     * never waits for the consumer. */
    drop
};

/*! The policy called \p name, "block" or "drop" (the block's full_queue_policy,
 * spead_recv --full-queue-policy and Python's RingStreamConfig take these words).
 * \throws std::invalid_argument naming the value and both policies */
SPEAD_API full_queue_policy full_queue_policy_from_name(const std::string& name);

/*! How a stream copies payloads (stream_config::set_memcpy(); spead2's memcpy). */
enum class memcpy_function {
    standard,   //!< memcpy
    nontemporal //!< stores that bypass the cache (see set_memcpy())
};

/*!
 * \brief Settings of a receive stream. Setters validate and throw
 * std::invalid_argument naming the parameter and the fix.
 */
class SPEAD_API stream_config
{
public:
    stream_config() = default;

    /*! Live heaps assembled at once (default 4). More interleaved senders or
     * reordering need more. */
    stream_config& set_max_heaps(std::size_t n);
    std::size_t get_max_heaps() const { return d_max_heaps; }

    /*! Largest heap accepted, bytes (default 64 MiB); larger heaps are dropped and
     * counted, so hostile input cannot exhaust memory. */
    stream_config& set_max_heap_size(std::size_t bytes);
    std::size_t get_max_heap_size() const { return d_max_heap_size; }

    stream_config& set_incomplete_heaps(incomplete_heaps policy);
    incomplete_heaps get_incomplete_heaps() const { return d_incomplete; }

    /*! End the stream at a STREAM_CTRL stop heap (default true, as spead2). When
     * false, the stop heap is counted and delivered as an ordinary heap, as spead2
     * does (heap::is_stop()). In a continuous stream a stop heap ends the reader
     * (thread) it came by, and the stream ends once every reader has: each reader's
     * senders stop on their own. */
    stream_config& set_stop_on_stop_heap(bool stop)
    {
        return spead::detail::assign(*this, d_stop_on_stop_heap, stop);
    }
    bool get_stop_on_stop_heap() const { return d_stop_on_stop_heap; }

    /*! Completed heaps queued for the consumer (default 8). When full, what happens is
     * the full_queue_policy's. At most max_queue_heaps; the queue's memory grows as it
     * fills. */
    stream_config& set_queue_heaps(std::size_t n);
    static constexpr std::size_t max_queue_heaps = std::size_t(1) << 20;
    std::size_t get_queue_heaps() const { return d_queue_heaps; }

    /*! When the heap queue is full: drop the newest heap (default here and in the
     * source block; Python streams, spead2's, block) or block the network reader (see
     * full_queue_policy). A continuous stream's chunks do not follow it (see
     * docs/continuous.md); its control heaps do not either (dropped when full). */
    stream_config& set_full_queue_policy(full_queue_policy policy);
    full_queue_policy get_full_queue_policy() const { return d_full_queue_policy; }

    /*! Heap storages kept for reuse (default: max_heaps + queue_heaps + 4). */
    std::size_t get_pool_heaps() const
    {
        return d_max_heaps * d_substreams + d_queue_heaps + 4;
    }

    /*! Windows of max_heaps live heaps each, a heap's window chosen by its cnt modulo
     * substreams (spead2's substreams; default 1): a heap is evicted only by newer
     * heaps of its own window, so a sender interleaving n streams of heaps numbered
     * i × n + k (e.g. spead2's substream senders with set_cnt_sequence) does not
     * evict one stream's heaps with another's. \throws std::invalid_argument for 0 */
    stream_config& set_substreams(std::size_t n);
    std::size_t get_substreams() const { return d_substreams; }

    /*! Assemble heaps without HEAP_SIZE (default true, as spead2): such a heap
     * completes when it leaves the window contiguous. False: a packet without
     * HEAP_SIZE is rejected and counted (packets_unsized). */
    stream_config& set_allow_unsized_heaps(bool allow)
    {
        return spead::detail::assign(*this, d_allow_unsized_heaps, allow);
    }
    bool get_allow_unsized_heaps() const { return d_allow_unsized_heaps; }

    /*! Place a heap's packets in any order (default true here; spead2's default is
     * false). False, as spead2: a heap starts only with a packet at offset 0, and a
     * packet that does not continue where its heap's bytes end is rejected
     * (packets_out_of_order), so one lost packet loses the rest of its heap. */
    stream_config& set_allow_out_of_order(bool allow)
    {
        return spead::detail::assign(*this, d_allow_out_of_order, allow);
    }
    bool get_allow_out_of_order() const { return d_allow_out_of_order; }

    /*! Readers added to the stream wait for stream::start() instead of starting at
     * once (default false), so that several readers, or several streams, start
     * together; a reader added after start() is refused (std::logic_error). */
    stream_config& set_explicit_start(bool explicit_start)
    {
        return spead::detail::assign(*this, d_explicit_start, explicit_start);
    }
    bool get_explicit_start() const { return d_explicit_start; }

    /*! How payloads are copied into heaps and chunks (default memcpy). nontemporal
     * (spead2's MEMCPY_NONTEMPORAL) stores past the cache: for data the consumer
     * reads later or on another core, it leaves the receiving core's cache to the
     * packets; x86-64 (SSE2) only, elsewhere it is memcpy. */
    stream_config& set_memcpy(memcpy_function copy)
    {
        return spead::detail::assign(*this, d_memcpy, copy);
    }
    memcpy_function get_memcpy() const { return d_memcpy; }

    /*! Where heap payload buffers come from (null, the default: 64-byte aligned heap
     * memory); e.g. an mmap_allocator. The stream pools its buffers, so the allocator
     * is called when the pool grows, not per heap. */
    stream_config& set_memory_allocator(std::shared_ptr<memory_allocator> allocator)
    {
        return spead::detail::assign(*this, d_memory_allocator, allocator);
    }
    const std::shared_ptr<memory_allocator>& get_memory_allocator() const
    {
        return d_memory_allocator;
    }

    /*! Makes the stream time-continuous (validates \p config). Heaps without the
     * timestamp item (descriptors, stop) are still assembled and popped as heaps. */
    stream_config& set_continuous(const continuous_config& config);
    bool is_continuous() const { return d_continuous; }
    const continuous_config& get_continuous() const { return d_continuous_config; }

    /*! Makes it a spead2-style chunk stream (recv_chunk_stream.h: chunk_ring_stream
     * sets this). */
    stream_config& set_chunk_stream(std::shared_ptr<chunk_stream_setup> setup);
    const std::shared_ptr<chunk_stream_setup>& get_chunk_stream() const
    {
        return d_chunk_stream;
    }

private:
    std::size_t d_max_heaps = 4;
    std::size_t d_max_heap_size = 64 * 1024 * 1024;
    incomplete_heaps d_incomplete = incomplete_heaps::drop;
    bool d_stop_on_stop_heap = true;
    std::size_t d_queue_heaps = 8;
    full_queue_policy d_full_queue_policy = full_queue_policy::drop;
    std::size_t d_substreams = 1;
    bool d_allow_unsized_heaps = true;
    bool d_allow_out_of_order = true;
    bool d_explicit_start = false;
    memcpy_function d_memcpy = memcpy_function::standard;
    std::shared_ptr<memory_allocator> d_memory_allocator;
    bool d_continuous = false;
    continuous_config d_continuous_config;
    std::shared_ptr<chunk_stream_setup> d_chunk_stream;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_STREAM_CONFIG_H */
