/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead2's chunk stream groups: one window of chunks shared by several member streams.

#include <gnuradio/spead/recv_chunk_stream_group.h>
#include <condition_variable>
#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <stdexcept>

namespace gr {
namespace spead {
namespace recv {

chunk_stream_group_config& chunk_stream_group_config::set_max_chunks(std::size_t n)
{
    if (n == 0)
        throw std::invalid_argument("max_chunks: 0; give at least 1 (chunks the group "
                                    "keeps live at once)");
    d_max_chunks = n;
    return *this;
}

chunk_stream_group_config&
chunk_stream_group_config::set_eviction_mode(eviction_mode mode)
{
    d_mode = mode;
    return *this;
}

struct chunk_stream_ring_group::state {
    chunk_stream_group_config config;
    std::shared_ptr<chunk_ringbuffer> data_ring;
    std::shared_ptr<chunk_ringbuffer> free_ring;

    std::mutex mutex;
    std::condition_variable moved;    //!< the window's head moved on, or it stopped
    std::deque<stream_chunk*> window; //!< chunk ids [head, head + size)
    std::uint64_t head = 0;
    std::vector<std::uint64_t> heads; //!< each member's window head
    std::vector<std::shared_ptr<chunk_stream_setup>> members;
    std::size_t ended = 0;
    std::uint64_t last_flush_until = 0;
    bool stopped = false;

    /*! Member \p m's chunk \p id (its window reached it). */
    stream_chunk* get_chunk(std::size_t m, std::uint64_t id)
    {
        std::unique_lock<std::mutex> lock(mutex);
        const std::uint64_t max = config.get_max_chunks();
        if (id < head)
            return nullptr;
        if (id - head >= max) {
            const std::uint64_t target = id - (max - 1);
            if (config.get_eviction_mode() ==
                    chunk_stream_group_config::eviction_mode::lossy &&
                target > last_flush_until) {
                last_flush_until = target;
                lock.unlock(); // the members' flushes come back through head_updated
                for (std::size_t j = 0; j < members.size(); j++) {
                    if (j == m)
                        continue;
                    auto& request = members[j]->flush_request;
                    std::uint64_t old = request.load();
                    while (old < target && !request.compare_exchange_weak(old, target)) {
                    }
                    if (members[j]->try_flush_until)
                        members[j]->try_flush_until(target);
                }
                lock.lock();
            }
            while (head < target && !stopped)
                moved.wait(lock);
            if (stopped)
                return nullptr;
        }
        while (id >= head + window.size()) {
            stream_chunk* c = take_free_chunk(*free_ring); // waits, as spead2's
            if (c) {
                c->chunk_id = std::int64_t(head + window.size());
                c->stream_id = members[m]->stream_id;
            }
            window.push_back(c);
        }
        return id >= head ? window[id - head] : nullptr;
    }

    /*! Member \p m's window starts at \p h now: chunks every member passed leave. */
    void head_updated(std::size_t m, std::uint64_t h)
    {
        std::lock_guard<std::mutex> lock(mutex);
        heads[m] = std::max(heads[m], h);
        const std::uint64_t least = *std::min_element(heads.begin(), heads.end());
        while (head < least && !window.empty()) {
            stream_chunk* c = window.front();
            window.pop_front();
            head++;
            if (c)
                hand_on_chunk(*data_ring, c); // waits for the consumer, as spead2's
        }
        if (window.empty() && head < least && least != ~std::uint64_t(0))
            head = least;
        moved.notify_all();
    }

    void member_ended(std::size_t m)
    {
        head_updated(m, ~std::uint64_t(0));
        bool last;
        {
            std::lock_guard<std::mutex> lock(mutex);
            last = ++ended == members.size();
        }
        if (last)
            data_ring->remove_producer();
    }
};

chunk_stream_group_member::chunk_stream_group_member(
    const stream_config& config, std::shared_ptr<chunk_stream_setup> setup)
    : stream(stream_config(config).set_chunk_stream(setup)), d_setup(std::move(setup))
{
}

chunk_stream_group_member::~chunk_stream_group_member() { stop(); }

chunk_stream_ring_group::chunk_stream_ring_group(
    const chunk_stream_group_config& config,
    std::shared_ptr<chunk_ringbuffer> data_ring,
    std::shared_ptr<chunk_ringbuffer> free_ring)
    : d_state(std::make_unique<state>())
{
    if (!data_ring || !free_ring)
        throw std::invalid_argument("data_ringbuffer and free_ringbuffer: both needed; "
                                    "give two ChunkRingbuffer objects");
    d_state->config = config;
    d_state->data_ring = std::move(data_ring);
    d_state->free_ring = std::move(free_ring);
    d_state->data_ring->add_producer();
}

chunk_stream_ring_group::~chunk_stream_ring_group()
{
    stop();
    d_members.clear(); // before the state their hooks reach
}

chunk_stream_group_member&
chunk_stream_ring_group::emplace_back(const stream_config& config,
                                      const chunk_stream_config& chunk_config,
                                      std::uintptr_t stream_id)
{
    state& s = *d_state;
    if (chunk_config.get_max_chunks() > s.config.get_max_chunks())
        throw std::invalid_argument(
            "max_chunks: " + std::to_string(chunk_config.get_max_chunks()) +
            " is more than the group's " + std::to_string(s.config.get_max_chunks()) +
            "; give the stream at most the group's max_chunks");
    if (!chunk_config.get_place())
        throw std::invalid_argument(
            "place: not set; give a placement (a C callback such as a numba cfunc, or "
            "the declarative placement by timestamp)");
    auto setup = std::make_shared<chunk_stream_setup>();
    const std::size_t m = d_members.size();
    setup->config = chunk_config;
    setup->stream_id = stream_id;
    state* sp = d_state.get();
    setup->acquire = [sp, m](std::int64_t id) {
        return sp->get_chunk(m, std::uint64_t(id));
    };
    setup->ready = [](stream_chunk*) {}; // the group hands chunks on
    setup->head_updated = [sp, m](std::uint64_t h) { sp->head_updated(m, h); };
    setup->ended = [sp, m] { sp->member_ended(m); };
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.stopped)
            throw std::invalid_argument("emplace_back: the group has stopped; make a new "
                                        "group");
        s.members.push_back(setup);
        s.heads.push_back(s.head);
    }
    d_members.push_back(std::make_unique<chunk_stream_group_member>(config, setup));
    return *d_members.back();
}

bool chunk_stream_ring_group::add_free_chunk(stream_chunk* c)
{
    if (c->present && c->present_size)
        std::memset(c->present, 0, c->present_size);
    return d_state->free_ring->try_push(c) == chunk_ringbuffer::result::ok;
}

const std::shared_ptr<chunk_ringbuffer>& chunk_stream_ring_group::data_ringbuffer() const
{
    return d_state->data_ring;
}

const std::shared_ptr<chunk_ringbuffer>& chunk_stream_ring_group::free_ringbuffer() const
{
    return d_state->free_ring;
}

const chunk_stream_group_config& chunk_stream_ring_group::get_config() const
{
    return d_state->config;
}

void chunk_stream_ring_group::stop()
{
    d_state->free_ring->stop();
    d_state->data_ring->stop();
    {
        std::lock_guard<std::mutex> lock(d_state->mutex);
        d_state->stopped = true;
    }
    d_state->moved.notify_all();
    for (auto& member : d_members)
        member->stop();
}

} // namespace recv
} // namespace spead
} // namespace gr
