/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::inproc_reader: batches from an inproc_queue to the stream's packet path.

#include <gnuradio/spead/recv_inproc.h>
#include <chrono>
#include <stdexcept>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

namespace {
constexpr std::chrono::milliseconds wait_slice(100); // wake() ends a wait sooner

std::shared_ptr<inproc_queue> checked(std::shared_ptr<inproc_queue> queue)
{
    if (!queue)
        throw std::invalid_argument(
            "queue: null; give the inproc_queue the sender writes to");
    return queue;
}
} // namespace

struct inproc_reader::impl : loop {
    impl(inproc_reader& owner, std::shared_ptr<inproc_queue> queue)
        : owner(owner), queue(checked(std::move(queue)))
    {
        batch.reserve(lossless_batch_packets);
        views.reserve(lossless_batch_packets);
    }

    void run() override
    {
        while (!owner.stopping()) {
            const std::size_t n =
                owner.lossless_batch(lossless_batch_packets, wait_slice);
            if (n == 0) {
                if (owner.get_stream().is_stopped())
                    return;
                continue;
            }
            const auto result = queue->pop(batch, n, wait_slice);
            if (result == inproc_queue::pop_result::stopped)
                return; // the sender's end of the stream
            if (result == inproc_queue::pop_result::timeout)
                continue;
            views.clear();
            for (const auto& p : batch)
                views.push_back({ p.data(), p.size() });
            const bool open = owner.add_packets(views.data(), views.size());
            queue->recycle(batch); // the stream copied what it keeps
            if (!open)
                return;
        }
    }

    void wake() override { queue->interrupt(); }

    inproc_reader& owner;
    const std::shared_ptr<inproc_queue> queue;
    std::vector<inproc_queue::packet> batch; //!< reader thread only
    std::vector<packet_view> views;
};

inproc_reader::inproc_reader(stream& owner, std::shared_ptr<inproc_queue> queue)
    : transport_reader(owner)
{
    set_loop(std::make_unique<impl>(*this, std::move(queue)));
}

const std::shared_ptr<inproc_queue>& inproc_reader::get_queue() const
{
    return loop_as<impl>().queue;
}

} // namespace recv
} // namespace spead
} // namespace gr
