/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "protocol/packet_writer.h"
#include "protocol/packetiser.h"
#include "rate_limiter.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/send_stream.h>
#include <condition_variable>
#include <sys/prctl.h>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gr {
namespace spead {
namespace send {

namespace {
/*! Packets handed to the transport at once: enough to amortise a syscall or a
 * doorbell, small enough that the header buffer stays in cache. */
constexpr std::size_t max_batch_packets = 64;
} // namespace

// ---- stream ----------------------------------------------------------------------

struct stream::impl {
    /*! Where send_heap() waits for its heap (on its own stack: nothing allocated). */
    struct sync_result {
        bool done = false;
        boost::system::error_code ec;
        std::size_t bytes = 0;
    };

    /*! A queued heap. Producers fill it under the mutex; once queued only the writer
     * touches it until it completes. */
    struct entry {
        std::optional<packet_generator> generator;
        std::size_t substream = 0;
        completion_handler handler;
        sync_result* waiter = nullptr;
        // writer progress
        bool all_cut = false;         //!< every packet written or abandoned
        std::uint64_t done_after = 0; //!< completions that finish it
        std::size_t bytes = 0;
        boost::system::error_code ec;

        /*! Empty again for the next heap (the generator holds a reference, so the
         * entry cannot simply be assigned). */
        void reset()
        {
            generator.reset();
            substream = 0;
            handler = nullptr;
            waiter = nullptr;
            all_cut = false;
            done_after = 0;
            bytes = 0;
            ec.clear();
        }
    };

    /*! The packets of one heap inside a batch: [first, end). */
    struct span {
        entry* e;
        std::size_t first;
        std::size_t end;
        bool finishes_heap;
    };

    impl(stream& owner, const stream_config& config)
        : owner(owner),
          config(config),
          logger("spead send_stream"),
          ring(config.get_max_heaps()),
          headers(max_batch_packets * config.get_max_packet_size()),
          packets(max_batch_packets),
          piece_begin(max_batch_packets)
    {
        pieces.reserve(max_batch_packets * 4);
        spans.reserve(max_batch_packets);
        to_post.reserve(config.get_max_heaps());
        if (config.get_rate() > 0)
            limiter.emplace(config.get_rate(),
                            static_cast<double>(config.get_burst_size()));
    }

    entry& at(std::size_t offset) { return ring[(head + offset) % ring.size()]; }

    bool enqueue_locked(const heap& h,
                        completion_handler&& handler,
                        sync_result* waiter,
                        std::int64_t cnt,
                        std::size_t substream_index);
    void check_substream(std::size_t substream_index) const;
    // writer thread
    void writer_loop();
    std::size_t fill_batch();
    void write_batch(std::size_t n);
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
    std::vector<std::uint8_t> headers; //!< packet headers of one batch
    std::vector<packet_piece> pieces;  //!< pieces of one batch, in packet order
    std::vector<packet> packets;
    std::vector<std::size_t> piece_begin;
    std::vector<span> spans;
    entry* current = nullptr; //!< heap being cut
    std::uint64_t packets_accepted = 0;
    std::optional<rate_limiter> limiter;
    /*! Counters of written batches not yet added to stats: they go in with the next
     * completion pass, so the writer takes the queue's mutex once per batch. */
    std::uint64_t pending_packets = 0;
    std::uint64_t pending_bytes = 0;
    std::uint64_t pending_failed = 0;
    std::uint64_t pending_waits = 0;
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
                                  sync_result* waiter,
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

std::size_t
stream::send_heap(const heap& h, std::int64_t cnt, std::size_t substream_index)
{
    d_impl->check_substream(substream_index);
    impl& d = *d_impl;
    impl::sync_result result;
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

std::size_t stream::impl::fill_batch()
{
    impl& d = *this;
    const std::size_t mps = config.get_max_packet_size();
    const std::size_t max_bytes =
        d.limiter ? d.limiter->max_batch_bytes() : static_cast<std::size_t>(-1);
    d.pieces.clear();
    d.spans.clear();
    std::size_t n = 0;
    std::size_t bytes = 0;
    while (n < max_batch_packets) {
        if (!d.current) {
            std::lock_guard<std::mutex> lock(d.mutex);
            if (d.started == d.count)
                break;
            d.current = &d.at(d.started);
            d.started++;
        }
        impl::entry& e = *d.current;
        packet_generator& gen = *e.generator;
        if (d.spans.empty() || d.spans.back().e != &e)
            d.spans.push_back({ &e, n, n, false });
        impl::span& s = d.spans.back();
        while (n < max_batch_packets && gen.has_next()) {
            // Stay within half a burst when rate limited (packets are at most mps).
            if (n > 0 && bytes + mps > max_bytes)
                break;
            d.piece_begin[n] = d.pieces.size();
            const std::size_t size = gen.next(d.headers.data() + n * mps, d.pieces);
            d.packets[n].n_pieces = d.pieces.size() - d.piece_begin[n];
            d.packets[n].size = size;
            d.packets[n].substream = e.substream;
            bytes += size;
            n++;
        }
        s.end = n;
        if (!gen.has_next()) {
            s.finishes_heap = true;
            d.current = nullptr;
        } else {
            break; // batch full
        }
    }
    // The pieces vector may have grown while cutting: point into it only now.
    for (std::size_t i = 0; i < n; i++)
        d.packets[i].pieces = d.pieces.data() + d.piece_begin[i];
    return n;
}

void stream::impl::write_batch(std::size_t n)
{
    impl& d = *this;
    std::size_t batch_bytes = 0;
    for (std::size_t i = 0; i < n; i++)
        batch_bytes += d.packets[i].size;
    bool waited = false;
    if (d.limiter && n > 0)
        waited = d.limiter->acquire(batch_bytes);

    boost::system::error_code ec;
    std::size_t accepted = 0;
    if (n > 0) {
        try {
            accepted =
                std::min(n, owner.d_writer->write_packets(d.packets.data(), n, ec));
        } catch (const std::exception& e) {
            d.logger.error("transport failed to write packets: {}", e.what());
            ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
        }
        if (accepted < n && !ec)
            ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
    }

    std::size_t accepted_bytes = 0;
    for (const impl::span& s : d.spans) {
        impl::entry& e = *s.e;
        for (std::size_t i = s.first; i < std::min(s.end, accepted); i++)
            e.bytes += d.packets[i].size;
        e.done_after = d.packets_accepted + std::min(s.end, accepted);
        if (s.end > accepted) {
            // Part of the heap did not go out: it fails, and the rest of it is not sent.
            if (!e.ec)
                e.ec = ec;
            if (d.current == &e)
                d.current = nullptr;
            e.all_cut = true;
        }
        if (s.finishes_heap)
            e.all_cut = true;
    }
    for (std::size_t i = 0; i < accepted; i++)
        accepted_bytes += d.packets[i].size;
    d.packets_accepted += accepted;

    d.pending_packets += accepted;
    d.pending_bytes += accepted_bytes;
    d.pending_failed += n - accepted;
    if (waited)
        d.pending_waits++;
}

void stream::impl::complete_heaps(bool wait)
{
    impl& d = *this;
    boost::system::error_code ec;
    std::uint64_t done = d.packets_accepted;
    try {
        done = owner.d_writer->reap_completions(wait, ec, d.packets_accepted);
    } catch (const std::exception& e) {
        d.logger.error("transport failed to report completions: {}", e.what());
        ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
    }
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        d.stats[send_stat::packets] += d.pending_packets;
        d.stats[send_stat::bytes] += d.pending_bytes;
        d.stats[send_stat::packets_failed] += d.pending_failed;
        d.stats[send_stat::rate_limit_waits] += d.pending_waits;
        d.pending_packets = d.pending_bytes = d.pending_failed = d.pending_waits = 0;
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
    if (d.limiter)
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    for (;;) {
        const std::size_t n = fill_batch();
        if (n > 0 || !d.spans.empty())
            write_batch(n);
        complete_heaps(false);
        if (n > 0)
            continue;

        std::unique_lock<std::mutex> lock(d.mutex);
        if (d.started < d.count || d.current)
            continue; // a heap arrived meanwhile
        if (d.started > 0) {
            // Nothing left to cut: now it is worth waiting for the transport.
            lock.unlock();
            complete_heaps(true);
            continue;
        }
        if (d.stopping)
            return;
        if (d.limiter)
            d.limiter->note_idle(); // waiting for work: that time is not caught up
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
