/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::stream's writer thread: takes queued heaps in order, writes them in batches
// and completes them once the transport is done with their memory.

#include "send_stream_impl.h"
#include <sys/prctl.h>
#include <boost/asio/post.hpp>
#include <exception>

namespace gr {
namespace spead {
namespace send {

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
