/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/packet_writer.h"
#include "send_stream_impl.h"
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gr {
namespace spead {
namespace send {

stream::stream(boost::asio::io_context& io,
               const stream_config& config,
               std::size_t num_substreams,
               std::unique_ptr<packet_writer> writer)
    : d_io(io),
      d_config(config),
      d_num_substreams(num_substreams),
      d_writer(std::move(writer)),
      d_impl(std::make_unique<impl>(*this, config))
{
    if (num_substreams == 0)
        throw std::invalid_argument("endpoints: a send stream needs at least one "
                                    "destination (substream)");
    if (!d_writer)
        throw std::invalid_argument("writer: a send stream needs a transport");
    d_writer->d_count = [this](send_stat s, std::uint64_t n) { add_stat(s, n); };
    d_writer->d_failure = [this](const std::string& cause) { writer_failed(cause); };
    d_impl->writer = std::thread([this] { d_impl->writer_loop(); });
}

stream::~stream()
{
    // Sends what is queued, then joins: the writer is destroyed only after this.
    {
        std::lock_guard<std::mutex> lock(d_impl->mutex);
        d_impl->stopping = true;
    }
    d_impl->work_available.notify_all();
    d_impl->writer.join();
}

void stream::set_cnt_sequence(std::uint64_t next, std::uint64_t step)
{
    if (step == 0)
        throw std::invalid_argument(
            "cnt step: must be at least 1 (heap cnts must differ for receivers to tell "
            "heaps apart)");
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    d_impl->cnt_next = next;
    d_impl->cnt_step = step;
}

send_stats stream::get_stats() const
{
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    return d_impl->stats;
}

std::size_t stream::get_queued_heaps() const
{
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    return d_impl->count;
}

void stream::add_stat(send_stat s, std::uint64_t n)
{
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    d_impl->stats[s] += n;
}

void stream::writer_failed(const std::string& cause)
{
    {
        std::lock_guard<std::mutex> lock(d_impl->mutex);
        if (!d_impl->failure.empty())
            return;
        d_impl->failure = cause;
        d_impl->failed.store(true, std::memory_order_release);
        d_impl->stats[send_stat::writer_errors]++;
    }
    d_impl->logger.error("the transport failed: {}; every heap from now on fails "
                         "(counted in heaps_failed)",
                         cause);
}

bool stream::has_failed() const { return d_impl->failed.load(std::memory_order_acquire); }

std::string stream::get_failure() const
{
    std::lock_guard<std::mutex> lock(d_impl->mutex);
    return d_impl->failure;
}

bool stream::impl::enqueue_locked(const heap& h,
                                  completion_handler&& handler,
                                  detail::heap_waiter* waiter,
                                  std::int64_t cnt,
                                  std::size_t substream_index)
{
    // The sequence wraps at 2^heap_address_bits, as spead2's does; an explicit cnt
    // that does not fit is refused by the generator below.
    const std::uint64_t heap_cnt = cnt < 0 ? cnt_next & h.get_flavour().max_address()
                                           : static_cast<std::uint64_t>(cnt);
    entry& e = at(count);
    // Cutting is checked here, so a heap that cannot be sent fails in the caller's hands
    // (std::invalid_argument) rather than on the writer thread.
    e.generator.emplace(h, heap_cnt, config.get_max_packet_size());
    e.substream = substream_index;
    e.handler = std::move(handler);
    e.waiter = waiter;
    if (cnt < 0)
        cnt_next += cnt_step;
    count++;
    work_available.notify_one();
    return true;
}

void stream::impl::check_substream(std::size_t substream_index) const
{
    const std::size_t n = owner.d_num_substreams;
    if (substream_index >= n)
        throw std::invalid_argument(
            "substream_index: " + std::to_string(substream_index) +
            " but the stream has " + std::to_string(n) + " destinations; use 0 to " +
            std::to_string(n - 1));
}

bool stream::async_send_heap(const heap& h,
                             completion_handler handler,
                             std::int64_t cnt,
                             std::size_t substream_index)
{
    d_impl->check_substream(substream_index);
    impl& d = *d_impl;
    boost::system::error_code refused;
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        if (d.stopping)
            refused = boost::asio::error::operation_aborted;
        else if (d.count == d.ring.size()) {
            d.stats[send_stat::heaps_rejected_queue_full]++;
            refused = boost::asio::error::would_block;
        } else
            return d.enqueue_locked(h, std::move(handler), nullptr, cnt, substream_index);
    }
    boost::asio::post(d_io,
                      [handler = std::move(handler), refused]() { handler(refused, 0); });
    return false;
}

namespace {
/*! A group's completion: its handler runs once every heap of it has completed. */
struct group_completion {
    std::mutex mutex;
    std::size_t remaining;
    std::size_t bytes = 0;
    boost::system::error_code ec;
    stream::completion_handler handler;

    void heap_done(const boost::system::error_code& heap_ec, std::size_t heap_bytes)
    {
        stream::completion_handler done;
        boost::system::error_code first_ec;
        std::size_t total;
        {
            std::lock_guard<std::mutex> lock(mutex);
            bytes += heap_bytes;
            if (heap_ec && !ec)
                ec = heap_ec;
            if (--remaining > 0)
                return;
            done = std::move(handler);
            first_ec = ec;
            total = bytes;
        }
        if (done)
            done(first_ec, total);
    }
};
} // namespace

bool stream::async_send_heaps(const std::vector<heap_reference>& heaps,
                              completion_handler handler,
                              group_mode mode)
{
    if (heaps.empty())
        throw std::invalid_argument("heaps: an empty group; give at least one heap");
    for (const heap_reference& r : heaps) {
        if (!r.h)
            throw std::invalid_argument("heaps: a null heap in the group");
        d_impl->check_substream(r.substream_index);
    }
    impl& d = *d_impl;
    boost::system::error_code refused;
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        if (d.stopping)
            refused = boost::asio::error::operation_aborted;
        else if (d.ring.size() - d.count < heaps.size()) {
            d.stats[send_stat::heaps_rejected_queue_full] += heaps.size();
            refused = boost::asio::error::would_block;
        } else {
            auto group = std::make_shared<group_completion>();
            group->remaining = heaps.size();
            group->handler = std::move(handler);
            const std::size_t first = d.count;
            for (const heap_reference& r : heaps)
                d.enqueue_locked(
                    *r.h,
                    [group](const boost::system::error_code& ec, std::size_t bytes) {
                        group->heap_done(ec, bytes);
                    },
                    nullptr,
                    r.cnt,
                    r.substream_index);
            if (mode == group_mode::round_robin)
                d.at(first).round_robin_group = heaps.size();
            return true;
        }
    }
    if (handler)
        boost::asio::post(
            d_io, [handler = std::move(handler), refused]() { handler(refused, 0); });
    return false;
}

std::size_t
stream::send_heap(const heap& h, std::int64_t cnt, std::size_t substream_index)
{
    d_impl->check_substream(substream_index);
    impl& d = *d_impl;
    detail::heap_waiter result;
    std::unique_lock<std::mutex> lock(d.mutex);
    d.heap_done.wait(lock, [&d] { return d.count < d.ring.size() || d.stopping; });
    if (d.stopping)
        throw boost::system::system_error(boost::asio::error::operation_aborted,
                                          "send_heap: the stream is stopping");
    d.enqueue_locked(h, completion_handler(), &result, cnt, substream_index);
    d.heap_done.wait(lock, [&result] { return result.done; });
    if (result.ec)
        throw boost::system::system_error(result.ec, "send_heap");
    return result.bytes;
}

void stream::flush()
{
    impl& d = *d_impl;
    std::unique_lock<std::mutex> lock(d.mutex);
    d.heap_done.wait(lock, [&d] { return d.count == 0; });
    lock.unlock();
    // The writer posts the last handlers just after releasing the mutex: a few
    // microseconds, never blocked.
    while (d.posting.load(std::memory_order_acquire) > 0)
        std::this_thread::yield();
}

} // namespace send
} // namespace spead
} // namespace gr
