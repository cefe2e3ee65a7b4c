/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead2's chunk stream API: its config, its ringbuffer and chunk_ring_stream.

#include "common/file_descriptor.h"
#include <gnuradio/spead/recv_chunk_stream.h>
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace recv {

chunk_stream_config&
chunk_stream_config::set_items(const std::vector<std::uint64_t>& items)
{
    d_items = items;
    return *this;
}

chunk_stream_config& chunk_stream_config::set_max_chunks(std::size_t n)
{
    if (n == 0)
        throw std::invalid_argument("max_chunks: 0; give at least 1 (chunks live at "
                                    "once; 1 means heaps must arrive in chunk order)");
    d_max_chunks = n;
    return *this;
}

chunk_stream_config&
chunk_stream_config::set_place(std::shared_ptr<chunk_placement_policy> place)
{
    d_place = std::move(place);
    return *this;
}

chunk_stream_config& chunk_stream_config::set_max_heap_extra(std::size_t bytes)
{
    d_max_heap_extra = bytes;
    return *this;
}

chunk_stream_config& chunk_stream_config::enable_packet_presence(std::size_t payload_size)
{
    if (payload_size == 0)
        throw std::invalid_argument("payload_size: 0; give the payload bytes of each "
                                    "packet (present gets one byte per packet)");
    d_presence = payload_size;
    return *this;
}

chunk_stream_config& chunk_stream_config::disable_packet_presence()
{
    d_presence = 0;
    return *this;
}

std::size_t chunk_stream_config::add_stat(const std::string& name, stat_mode mode)
{
    for (const auto& s : d_stats)
        if (s.first == name)
            throw std::invalid_argument("add_stat: a statistic named '" + name +
                                        "' exists; give another name");
    d_stats.emplace_back(name, mode);
    return first_custom_stat + d_stats.size() - 1;
}

chunk_ringbuffer::chunk_ringbuffer(std::size_t capacity) : d_capacity(capacity)
{
    if (capacity == 0)
        throw std::invalid_argument("maxsize: 0; give at least 1");
}

/*! Level-triggered eventfds: a counter of 1 while ready, 0 while not. */
struct chunk_ringbuffer::readiness_fds {
    file_descriptor data, space;
    bool data_ready = false, space_ready = false;

    static file_descriptor make()
    {
        file_descriptor fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
        if (!fd)
            throw std::system_error(errno, std::generic_category(), "eventfd");
        return fd;
    }
    static void set(const file_descriptor& fd, bool& state, bool ready)
    {
        if (state == ready)
            return;
        std::uint64_t value = 1;
        // A write of 1 to a counter at 0, or a read that empties it: neither fails.
        if (ready)
            (void)!::write(fd.get(), &value, sizeof(value));
        else
            (void)!::read(fd.get(), &value, sizeof(value));
        state = ready;
    }
};

chunk_ringbuffer::~chunk_ringbuffer()
{
    for (stream_chunk* c : d_chunks)
        discard(c);
}

void chunk_ringbuffer::set_discard(std::function<void(stream_chunk*)> discard)
{
    d_discard = std::move(discard);
}

void chunk_ringbuffer::discard(stream_chunk* c)
{
    if (d_discard)
        d_discard(c);
}

void chunk_ringbuffer::update_fds()
{
    if (!d_fds)
        return;
    readiness_fds::set(d_fds->data, d_fds->data_ready, d_stopped || !d_chunks.empty());
    readiness_fds::set(
        d_fds->space, d_fds->space_ready, d_stopped || d_chunks.size() < d_capacity);
}

int chunk_ringbuffer::data_fd()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (!d_fds) {
        auto fds = std::make_unique<readiness_fds>();
        fds->data = readiness_fds::make();
        fds->space = readiness_fds::make();
        d_fds = std::move(fds);
        update_fds();
    }
    return d_fds->data.get();
}

int chunk_ringbuffer::space_fd()
{
    data_fd(); // makes both
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_fds->space.get();
}

chunk_ringbuffer::result chunk_ringbuffer::push(stream_chunk* c,
                                                std::chrono::microseconds timeout)
{
    std::unique_lock<std::mutex> lock(d_mutex);
    if (!d_space.wait_for(
            lock, timeout, [this] { return d_stopped || d_chunks.size() < d_capacity; }))
        return result::timeout;
    if (d_stopped)
        return result::stopped;
    d_chunks.push_back(c);
    update_fds();
    lock.unlock();
    d_data.notify_one();
    return result::ok;
}

chunk_ringbuffer::result chunk_ringbuffer::try_push(stream_chunk* c)
{
    return push(c, std::chrono::microseconds(0));
}

chunk_ringbuffer::result chunk_ringbuffer::pop(stream_chunk*& out,
                                               std::chrono::microseconds timeout)
{
    return take(out, timeout, false);
}

chunk_ringbuffer::result chunk_ringbuffer::pop_newest(stream_chunk*& out,
                                                      std::chrono::microseconds timeout)
{
    return take(out, timeout, true);
}

chunk_ringbuffer::result
chunk_ringbuffer::take(stream_chunk*& out, std::chrono::microseconds timeout, bool newest)
{
    std::unique_lock<std::mutex> lock(d_mutex);
    if (!d_data.wait_for(
            lock, timeout, [this] { return d_stopped || !d_chunks.empty(); }))
        return result::timeout;
    // What was pushed before the stop is still handed out, as spead2's.
    if (d_chunks.empty())
        return result::stopped;
    if (newest) {
        out = d_chunks.back();
        d_chunks.pop_back();
    } else {
        out = d_chunks.front();
        d_chunks.pop_front();
    }
    update_fds();
    lock.unlock();
    d_space.notify_one();
    return result::ok;
}

chunk_ringbuffer::result chunk_ringbuffer::try_pop(stream_chunk*& out)
{
    return pop(out, std::chrono::microseconds(0));
}

void chunk_ringbuffer::stop()
{
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_stopped = true;
        update_fds();
    }
    d_data.notify_all();
    d_space.notify_all();
}

bool chunk_ringbuffer::is_stopped() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_stopped;
}

void chunk_ringbuffer::add_producer()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_producers++;
}

bool chunk_ringbuffer::remove_producer()
{
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        if (d_producers == 0 || --d_producers != 0)
            return false;
    }
    stop();
    return true;
}

std::size_t chunk_ringbuffer::size() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_chunks.size();
}

stream_config& stream_config::set_chunk_stream(std::shared_ptr<chunk_stream_setup> setup)
{
    d_chunk_stream = std::move(setup);
    return *this;
}

namespace {
std::shared_ptr<chunk_stream_setup> make_setup(const chunk_stream_config& chunk_config,
                                               std::shared_ptr<chunk_ringbuffer> data,
                                               std::shared_ptr<chunk_ringbuffer> free,
                                               std::uintptr_t stream_id)
{
    if (!data || !free)
        throw std::invalid_argument("data_ringbuffer and free_ringbuffer: both needed; "
                                    "give two ChunkRingbuffer objects");
    if (!chunk_config.get_place())
        throw std::invalid_argument(
            "place: not set; give a placement (a C callback such as a numba cfunc, or "
            "the declarative placement by timestamp)");
    auto setup = std::make_shared<chunk_stream_setup>();
    setup->config = chunk_config;
    setup->stream_id = stream_id;
    setup->data_ring = std::move(data);
    setup->free_ring = std::move(free);
    chunk_ringbuffer* data_ring = setup->data_ring.get();
    chunk_ringbuffer* free_ring = setup->free_ring.get();
    setup->acquire = [free_ring, stream_id](std::int64_t id) {
        stream_chunk* c = take_free_chunk(*free_ring);
        if (c) {
            c->chunk_id = id;
            c->stream_id = stream_id;
        }
        return c;
    };
    setup->ready = [data_ring](stream_chunk* c) { hand_on_chunk(*data_ring, c); };
    // spead2's stop_received(): this stream adds no more chunks
    setup->ended = [data_ring] { data_ring->remove_producer(); };
    data_ring->add_producer();
    return setup;
}

stream_config with_setup(stream_config config, std::shared_ptr<chunk_stream_setup> setup)
{
    config.set_chunk_stream(std::move(setup));
    return config;
}
} // namespace

chunk_ring_stream::chunk_ring_stream(const stream_config& config,
                                     const chunk_stream_config& chunk_config,
                                     std::shared_ptr<chunk_ringbuffer> data_ring,
                                     std::shared_ptr<chunk_ringbuffer> free_ring,
                                     std::uintptr_t stream_id)
    : chunk_ring_stream(
          config,
          make_setup(chunk_config, std::move(data_ring), std::move(free_ring), stream_id))
{
}

chunk_ring_stream::chunk_ring_stream(const stream_config& config,
                                     std::shared_ptr<chunk_stream_setup> setup)
    : stream(with_setup(config, setup)), d_setup(std::move(setup))
{
}

chunk_ring_stream::~chunk_ring_stream() { stop(); }

bool chunk_ring_stream::add_free_chunk(stream_chunk* c)
{
    if (c->present && c->present_size)
        std::memset(c->present, 0, c->present_size);
    return d_setup->free_ring->try_push(c) == chunk_ringbuffer::result::ok;
}

void chunk_ring_stream::stop()
{
    // Rings first: a reader waiting for a free chunk or for room lets go.
    d_setup->free_ring->stop();
    d_setup->data_ring->stop();
    stream::stop();
}

std::vector<std::pair<std::string, std::uint64_t>>
chunk_ring_stream::get_custom_stats() const
{
    return d_setup->custom_values();
}

std::vector<std::pair<std::string, std::uint64_t>>
chunk_stream_setup::custom_values() const
{
    std::lock_guard<std::mutex> lock(stats_mutex);
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (std::size_t i = 0; i < custom_stats.size(); i++)
        out.emplace_back(custom_stats[i].first,
                         i < custom_totals.size() ? custom_totals[i] : 0);
    return out;
}

stream_chunk* take_free_chunk(chunk_ringbuffer& ring)
{
    stream_chunk* c = nullptr;
    for (;;) {
        // The newest: the chunk handed back last is the one still in the cache.
        const auto r = ring.pop_newest(c, std::chrono::seconds(1));
        if (r == chunk_ringbuffer::result::ok)
            return c;
        if (r == chunk_ringbuffer::result::stopped)
            return nullptr;
    }
}

void hand_on_chunk(chunk_ringbuffer& ring, stream_chunk* c)
{
    chunk_ringbuffer::result r;
    while ((r = ring.push(c, std::chrono::seconds(1))) ==
           chunk_ringbuffer::result::timeout) {
    }
    if (r == chunk_ringbuffer::result::stopped)
        ring.discard(c);
}

} // namespace recv
} // namespace spead
} // namespace gr
