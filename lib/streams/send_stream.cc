/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "packet_batch.h"
#include "protocol/packet_writer.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/send_stream.h>
#include <condition_variable>
#include <sys/prctl.h>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gr {
namespace spead {
namespace send {

/*!
 * The heap queue: producers queue heaps under the mutex; the writer thread takes them
 * in order (started), cuts and writes them in batches (packet_batch) and completes
 * them once the transport is done with their memory.
 */
struct stream::impl {
    using entry = detail::queued_heap;

    impl(stream& owner, const stream_config& config)
        : owner(owner),
          config(config),
          logger("spead send_stream"),
          ring(config.get_max_heaps()),
          batch(config, [this] { return next_heap(); })
    {
        to_post.reserve(config.get_max_heaps());
    }

    entry& at(std::size_t offset) { return ring[(head + offset) % ring.size()]; }

    bool enqueue_locked(const heap& h,
                        completion_handler&& handler,
                        detail::heap_waiter* waiter,
                        std::int64_t cnt,
                        std::size_t substream_index);
    void check_substream(std::size_t substream_index) const;
    // writer thread
    void writer_loop();
    /*! The oldest heap the writer has not begun, now begun; null if none. */
    entry* next_heap();
    void complete_heaps(bool wait);

    stream& owner;
    const stream_config config;
    gr::logger logger;

    std::mutex mutex;
    std::condition_variable work_available; //!< writer waits: heap queued or stopping
    std::condition_variable heap_done;      //!< producers wait: room, completion, flush
    std::vector<entry> ring;
    std::size_t head = 0;    //!< oldest heap not completed
    std::size_t count = 0;   //!< heaps in the queue
    std::size_t started = 0; //!< of those, heaps the writer has begun
    std::uint64_t cnt_next = 1;
    std::uint64_t cnt_step = 1;
    bool stopping = false;
    send_stats stats;
    std::string failure; //!< the transport's, once it failed for good
    /*! failure is set: read without the mutex (the sink asks on every work()). */
    std::atomic<bool> failed{ false };
    std::thread writer;

    // ---- writer thread only ----
    detail::packet_batch batch;
    /*! Completed heaps' handlers, posted once the mutex is released: a producer woken
     * by the post must not find the mutex still held (it would block on it, and the
     * writer would have to wake it a second time). Capacity: the ring's size. */
    struct finished {
        completion_handler handler;
        boost::system::error_code ec;
        std::size_t bytes;
    };
    std::vector<finished> to_post;
    /*! Handlers taken off the queue but not yet posted; flush() waits for them too,
     * so that once it returns every completion handler is on the io_context. */
    std::atomic<std::size_t> posting{ 0 };
};

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

// ---- writer thread -----------------------------------------------------------------

stream::impl::entry* stream::impl::next_heap()
{
    std::lock_guard<std::mutex> lock(mutex);
    if (started == count)
        return nullptr;
    return &at(started++);
}

void stream::impl::complete_heaps(bool wait)
{
    impl& d = *this;
    boost::system::error_code ec;
    std::uint64_t done = batch.accepted();
    try {
        done = owner.d_writer->reap_completions(wait, ec, batch.accepted());
    } catch (const std::exception& e) {
        d.logger.error("transport failed to report completions: {}", e.what());
        ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
    }
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        // The batches' counters go in here, so the writer takes the mutex once per
        // batch.
        const detail::packet_batch::counts written = batch.take_counts();
        d.stats[send_stat::packets] += written.packets;
        d.stats[send_stat::bytes] += written.bytes;
        d.stats[send_stat::packets_failed] += written.failed;
        d.stats[send_stat::rate_limit_waits] += written.rate_limit_waits;
        bool any = false;
        while (d.started > 0) {
            impl::entry& e = d.at(0);
            if (!e.all_cut || e.done_after > done)
                break;
            if (ec && !e.ec)
                e.ec =
                    ec; // an error found on completion belongs to the heaps it completes
            d.stats[e.ec ? send_stat::heaps_failed : send_stat::heaps]++;
            if (e.ec && e.bytes > 0)
                d.stats[send_stat::heaps_lost_in_flight]++; // part of it went out
            if (e.waiter) {
                e.waiter->ec = e.ec;
                e.waiter->bytes = e.bytes;
                e.waiter->done = true;
            } else if (e.handler) {
                // At most the ring's size: to_post never grows past its capacity.
                d.to_post.push_back({ std::move(e.handler), e.ec, e.bytes });
            }
            e.reset();
            d.head = (d.head + 1) % d.ring.size();
            d.count--;
            d.started--;
            any = true;
        }
        d.posting.store(d.to_post.size(), std::memory_order_relaxed);
        if (any)
            d.heap_done.notify_all();
    }
    if (config.get_inline_completions()) {
        for (impl::finished& f : d.to_post) {
            try {
                f.handler(f.ec, f.bytes);
            } catch (const std::exception& e) {
                d.logger.error("completion handler threw: {}", e.what());
            }
        }
    } else {
        for (impl::finished& f : d.to_post)
            boost::asio::post(owner.d_io,
                              [handler = std::move(f.handler),
                               ec = f.ec,
                               bytes = f.bytes]() { handler(ec, bytes); });
    }
    d.to_post.clear();
    d.posting.store(0, std::memory_order_release);
}

void stream::impl::writer_loop()
{
    impl& d = *this;
    // The default timer slack (50 us) would make every rate-limiter sleep overshoot.
    if (batch.rate_limited())
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    for (;;) {
        const std::size_t n = batch.fill();
        if (n > 0 || batch.has_heaps())
            batch.write(n, *owner.d_writer);
        complete_heaps(false);
        if (n > 0)
            continue;

        std::unique_lock<std::mutex> lock(d.mutex);
        if (d.started < d.count || batch.cutting())
            continue; // a heap arrived meanwhile
        if (d.started > 0) {
            // Nothing left to cut: now it is worth waiting for the transport.
            lock.unlock();
            complete_heaps(true);
            continue;
        }
        if (d.stopping)
            return;
        batch.note_idle(); // waiting for work: that time is not caught up
        const auto has_work = [&d] { return d.started < d.count || d.stopping; };
        const std::chrono::milliseconds period = owner.d_writer->idle_period();
        if (period.count() == 0) {
            d.work_available.wait(lock, has_work);
        } else if (!d.work_available.wait_for(lock, period, has_work)) {
            lock.unlock();
            try {
                owner.d_writer->idle(); // a loss it finds is reported at the next batch
            } catch (const std::exception& e) {
                d.logger.error("transport failed its idle check: {}", e.what());
            }
        }
    }
}

} // namespace send
} // namespace spead
} // namespace gr
