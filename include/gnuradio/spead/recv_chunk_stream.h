/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_CHUNK_STREAM_H
#define INCLUDED_SPEAD_RECV_CHUNK_STREAM_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_chunk_place.h>
#include <gnuradio/spead/recv_stream.h>
#include <condition_variable>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief A chunk of spead2's chunk streams in memory its maker owns (spead2's
 * recv::chunk): heaps are copied to data + heap_offset, present[heap_index] is set
 * once a heap is complete, extra takes what the placement writes there.
 */
class SPEAD_API stream_chunk
{
public:
    virtual ~stream_chunk() = default;
    std::int64_t chunk_id = -1;
    std::uintptr_t stream_id = 0;
    std::uint8_t* present = nullptr;
    std::size_t present_size = 0;
    std::uint8_t* data = nullptr;
    std::size_t data_size = 0;
    std::uint8_t* extra = nullptr;
    std::size_t extra_size = 0;
};

/*! How a custom statistic merges (spead2's StreamStatConfig modes). */
enum class stat_mode { counter, maximum };

/*! Settings of a chunk stream (spead2's chunk_stream_config). */
class SPEAD_API chunk_stream_config
{
public:
    static constexpr std::size_t default_max_chunks = 2;

    /*! Immediate items whose values the placement reads (chunk_place_data::items). */
    chunk_stream_config& set_items(const std::vector<std::uint64_t>& items);
    const std::vector<std::uint64_t>& get_items() const { return d_items; }
    /*! Chunks live at once (default 2); \throws std::invalid_argument for 0 */
    chunk_stream_config& set_max_chunks(std::size_t n);
    std::size_t get_max_chunks() const { return d_max_chunks; }
    chunk_stream_config& set_place(std::shared_ptr<chunk_placement_policy> place);
    const std::shared_ptr<chunk_placement_policy>& get_place() const { return d_place; }
    chunk_stream_config& set_max_heap_extra(std::size_t bytes);
    std::size_t get_max_heap_extra() const { return d_max_heap_extra; }
    /*! present[heap_index + payload_offset / payload_size] per packet instead of one
     * flag per complete heap. \throws std::invalid_argument for 0 */
    chunk_stream_config& enable_packet_presence(std::size_t payload_size);
    chunk_stream_config& disable_packet_presence();
    std::size_t get_packet_presence_payload_size() const { return d_presence; }

    /*! Custom statistics, incremented by the placement through
     * chunk_place_data::batch_stats[index]; \return the index (first_custom_stat
     * + the order added). \throws std::invalid_argument when the name is taken */
    std::size_t add_stat(const std::string& name, stat_mode mode = stat_mode::counter);
    const std::vector<std::pair<std::string, stat_mode>>& get_stats() const
    {
        return d_stats;
    }
    /*! Index of the first custom statistic: the built-in ones come first. */
    static constexpr std::size_t first_custom_stat = std::size_t(recv_stat::count);

private:
    std::vector<std::uint64_t> d_items;
    std::size_t d_max_chunks = default_max_chunks;
    std::shared_ptr<chunk_placement_policy> d_place;
    std::size_t d_max_heap_extra = 0;
    std::size_t d_presence = 0;
    std::vector<std::pair<std::string, stat_mode>> d_stats;
};

/*!
 * \brief A bounded queue of chunks (spead2's ChunkRingbuffer): push waits for room,
 * pop for a chunk; stop() (or the last remove_producer()) ends it, after which pop
 * returns what is left and then reports the end. It does not own the chunks.
 */
class SPEAD_API chunk_ringbuffer
{
public:
    explicit chunk_ringbuffer(std::size_t capacity);
    ~chunk_ringbuffer();

    enum class result { ok, timeout, stopped };
    /*! Waits up to \p timeout for room. */
    result push(stream_chunk* c, std::chrono::microseconds timeout);
    /*! Pushes unless full (result timeout) or stopped. */
    result try_push(stream_chunk* c);
    /*! Waits up to \p timeout for a chunk. */
    result pop(stream_chunk*& out, std::chrono::microseconds timeout);
    result try_pop(stream_chunk*& out);
    /*! As pop, but takes the chunk pushed last. A stream takes its free chunks so: with
     * a consumer that keeps up, the few chunks it hands back in turn are reused while
     * still in the CPU's cache, however many the ring holds (spead2 takes the oldest). */
    result pop_newest(stream_chunk*& out, std::chrono::microseconds timeout);
    void stop();
    bool is_stopped() const;
    void add_producer();
    /*! \return true when it was the last producer (the ring stopped). */
    bool remove_producer();
    std::size_t size() const;
    std::size_t capacity() const { return d_capacity; }
    /*! For event loops (spead2's data_fd): an eventfd readable while a pop would
     * not wait (a chunk is there, or the ring stopped). Made on the first call;
     * the ring owns it. */
    int data_fd();
    /*! As data_fd, for push (spead2's space_fd): readable while there is room or
     * the ring stopped. */
    int space_fd();
    /*! What to do with a chunk the ring lets go of without handing it out: those
     * still inside when it is destroyed, and those hand_on_chunk() could not push
     * because it had stopped (spead2 destroys them; the Python bindings drop their
     * reference). Set before the ring is shared. */
    void set_discard(std::function<void(stream_chunk*)> discard);
    /*! Lets go of \p c (see set_discard; nothing happens without one). */
    void discard(stream_chunk* c);

private:
    struct readiness_fds;
    /*! Brings the fds' readiness up to date (d_mutex held). */
    void update_fds();
    result take(stream_chunk*& out, std::chrono::microseconds timeout, bool newest);

    const std::size_t d_capacity;
    std::unique_ptr<readiness_fds> d_fds; //!< null until data_fd()/space_fd()
    std::function<void(stream_chunk*)> d_discard;
    mutable std::mutex d_mutex;
    std::condition_variable d_data;
    std::condition_variable d_space;
    std::deque<stream_chunk*> d_chunks;
    std::size_t d_producers = 0;
    bool d_stopped = false;
};

/*! What a chunk stream's placement needs; set on its stream_config. Where chunks
 * come from and go: a ring stream's rings, or a group member's group. */
struct SPEAD_API chunk_stream_setup {
    chunk_stream_config config;
    std::uintptr_t stream_id = 0;
    /*! A chunk for an id entering the window (null: its heaps are dropped). */
    std::function<stream_chunk*(std::int64_t chunk_id)> acquire;
    /*! A chunk leaving the window, in id order. */
    std::function<void(stream_chunk*)> ready;
    /*! The window's oldest chunk id moved on (may be empty). */
    std::function<void(std::uint64_t head)> head_updated;
    /*! The stream ended; its window has been handed on. */
    std::function<void()> ended;
    /*! Set by the placement: flushes the window up to a chunk id unless the stream
     * is placing a batch right now (then flush_request does it after the batch). */
    std::function<bool(std::uint64_t)> try_flush_until;
    /*! A chunk id the window must move to (0: none); looked at once per batch. */
    std::atomic<std::uint64_t> flush_request{ 0 };
    /*! The ring stream's rings (null in a group member: the group has them). */
    std::shared_ptr<chunk_ringbuffer> data_ring;
    std::shared_ptr<chunk_ringbuffer> free_ring;
    /*! The custom statistics' totals (config.get_stats() order, then too_old_heaps
     * and rejected_heaps), merged once per batch. */
    mutable std::mutex stats_mutex;
    std::vector<std::uint64_t> custom_totals;
    std::vector<std::pair<std::string, stat_mode>> custom_stats;

    /*! (name, value) of the custom statistics. */
    std::vector<std::pair<std::string, std::uint64_t>> custom_values() const;
};

/*! A free chunk from \p ring, waiting as long as it takes (null once it stopped). */
SPEAD_API stream_chunk* take_free_chunk(chunk_ringbuffer& ring);
/*! A chunk to \p ring, waiting for room (discarded once it stopped: see
 * chunk_ringbuffer::set_discard). */
SPEAD_API void hand_on_chunk(chunk_ringbuffer& ring, stream_chunk* c);

/*!
 * \brief spead2's chunk_ring_stream: heaps are copied, placed by the placement
 * policy, straight into chunks taken from \p free_ring; a chunk leaves the window
 * (max_chunks) to \p data_ring. Both rings block, as spead2's: a slow consumer
 * makes the reader wait (the socket buffer absorbs, then the kernel drops and
 * counts). Readers are added as to any recv::stream.
 */
class SPEAD_API chunk_ring_stream : public stream
{
public:
    chunk_ring_stream(const stream_config& config,
                      const chunk_stream_config& chunk_config,
                      std::shared_ptr<chunk_ringbuffer> data_ring,
                      std::shared_ptr<chunk_ringbuffer> free_ring,
                      std::uintptr_t stream_id = 0);
    ~chunk_ring_stream() override;

    /*! Clears its present flags and puts it in the free ring (dropped silently once
     * that ring is stopped, as spead2). \return false when it was not taken. */
    bool add_free_chunk(stream_chunk* c);
    const std::shared_ptr<chunk_ringbuffer>& data_ringbuffer() const
    {
        return d_setup->data_ring;
    }
    const std::shared_ptr<chunk_ringbuffer>& free_ringbuffer() const
    {
        return d_setup->free_ring;
    }
    /*! Stops the rings first (so a reader waiting on them lets go), then the stream. */
    void stop();
    /*! (name, value) of the custom statistics. */
    std::vector<std::pair<std::string, std::uint64_t>> get_custom_stats() const;

private:
    chunk_ring_stream(const stream_config& config,
                      std::shared_ptr<chunk_stream_setup> setup);
    std::shared_ptr<chunk_stream_setup> d_setup;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_CHUNK_STREAM_H */
