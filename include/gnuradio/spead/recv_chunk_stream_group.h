/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_CHUNK_STREAM_GROUP_H
#define INCLUDED_SPEAD_RECV_CHUNK_STREAM_GROUP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_chunk_stream.h>
#include <cstddef>
#include <memory>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*! Settings of a chunk stream group (spead2's chunk_stream_group_config). */
class SPEAD_API chunk_stream_group_config
{
public:
    static constexpr std::size_t default_max_chunks =
        chunk_stream_config::default_max_chunks;
    /*! What a member that needs a chunk beyond the group's window does. */
    enum class eviction_mode {
        lossy,   //!< the lagging members are made to let go of the oldest chunk
        lossless //!< it waits until every member has moved past the oldest chunk
    };

    /*! \throws std::invalid_argument for 0 */
    chunk_stream_group_config& set_max_chunks(std::size_t n);
    std::size_t get_max_chunks() const { return d_max_chunks; }
    chunk_stream_group_config& set_eviction_mode(eviction_mode mode);
    eviction_mode get_eviction_mode() const { return d_mode; }

private:
    std::size_t d_max_chunks = default_max_chunks;
    eviction_mode d_mode = eviction_mode::lossy;
};

/*! A stream of a chunk stream group: readers as any recv::stream; its chunks are the
 * group's. */
class SPEAD_API chunk_stream_group_member : public stream
{
public:
    chunk_stream_group_member(const stream_config& config,
                              std::shared_ptr<chunk_stream_setup> setup);
    ~chunk_stream_group_member() override;
    std::vector<std::pair<std::string, std::uint64_t>> get_custom_stats() const
    {
        return d_setup->custom_values();
    }

private:
    std::shared_ptr<chunk_stream_setup> d_setup;
};

/*!
 * \brief spead2's chunk_stream_ring_group: several streams (one per reader thread,
 * the multi-core pattern) fill one window of chunks. A chunk leaves for \p data_ring
 * once every member has moved past it; a member needing a chunk beyond the window
 * waits for the others (lossless) or makes them let go (lossy: a member placing a
 * batch lets go after it, an idle one at once).
 */
class SPEAD_API chunk_stream_ring_group
{
public:
    chunk_stream_ring_group(const chunk_stream_group_config& config,
                            std::shared_ptr<chunk_ringbuffer> data_ring,
                            std::shared_ptr<chunk_ringbuffer> free_ring);
    ~chunk_stream_ring_group();
    chunk_stream_ring_group(const chunk_stream_ring_group&) = delete;
    chunk_stream_ring_group& operator=(const chunk_stream_ring_group&) = delete;

    /*! A new member. \throws std::invalid_argument when its max_chunks exceeds the
     * group's, or after stop() */
    chunk_stream_group_member& emplace_back(const stream_config& config,
                                            const chunk_stream_config& chunk_config,
                                            std::uintptr_t stream_id = 0);
    std::size_t size() const { return d_members.size(); }
    chunk_stream_group_member& operator[](std::size_t i) { return *d_members[i]; }

    /*! As chunk_ring_stream::add_free_chunk(). */
    bool add_free_chunk(stream_chunk* c);
    const std::shared_ptr<chunk_ringbuffer>& data_ringbuffer() const;
    const std::shared_ptr<chunk_ringbuffer>& free_ringbuffer() const;
    const chunk_stream_group_config& get_config() const;
    /*! Stops the rings, then every member. */
    void stop();

    struct state;

private:
    std::unique_ptr<state> d_state;
    std::vector<std::unique_ptr<chunk_stream_group_member>> d_members;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_CHUNK_STREAM_GROUP_H */
