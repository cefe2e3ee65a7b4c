/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "pcap_file.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_pcap.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

namespace {
/*! Datagrams handed to the stream at once, as the socket reader does. */
constexpr std::size_t batch_size = 64;
} // namespace

struct pcap_reader::impl {
    impl(stream& owner, const std::string& path, std::uint16_t dst_port)
        : owner(owner), logger("spead pcap_reader"), file(path, dst_port)
    {
        views.reserve(batch_size);
    }

    void run();
    void publish_stats()
    {
        std::lock_guard<std::mutex> lock(stats_mutex);
        stats = file.stats();
        replayed = file.datagrams_kept();
    }

    stream& owner;
    gr::logger logger;
    pcap_file_reader file; //!< reader thread only
    std::vector<packet_view> views;

    mutable std::mutex stats_mutex; //!< guards the snapshot below
    recv_stats stats;
    std::uint64_t replayed = 0;

    std::thread thread;
    std::atomic<bool> stopping{ false };
};

void pcap_reader::impl::run()
{
    while (!stopping.load(std::memory_order_relaxed)) {
        // A file can wait for the consumer, unlike a NIC: replay never overflows the
        // heap queue, however slow the flowgraph.
        const std::size_t free =
            owner.wait_for_queue_space(std::chrono::milliseconds(100));
        if (free == 0) {
            if (owner.is_stopped())
                return;
            continue;
        }
        const std::size_t max_batch =
            std::min(batch_size, std::max<std::size_t>(1, free / 2));
        std::size_t n = 0;
        try {
            n = file.next_batch(views, max_batch);
        } catch (const std::exception& e) {
            logger.error("{}; replay ends here", e.what());
            n = 0;
        }
        publish_stats();
        if (n == 0) {
            owner.reader_finished();
            return;
        }
        if (!owner.add_packets(views.data(), n))
            return; // the stream ended (stop heap or stop())
    }
}

pcap_reader::pcap_reader(stream& owner, const std::string& path, std::uint16_t dst_port)
    : reader(owner), d_impl(std::make_unique<impl>(owner, path, dst_port))
{
}

pcap_reader::~pcap_reader() { stop(); }

void pcap_reader::start()
{
    if (d_impl->thread.joinable() || d_impl->stopping.load())
        return;
    d_impl->thread = std::thread([this] { d_impl->run(); });
}

void pcap_reader::stop()
{
    // The thread checks the flag between batches; a batch takes microseconds.
    d_impl->stopping.store(true);
    if (d_impl->thread.joinable())
        d_impl->thread.join();
}

recv_stats pcap_reader::transport_stats() const
{
    std::lock_guard<std::mutex> lock(d_impl->stats_mutex);
    return d_impl->stats;
}

std::uint64_t pcap_reader::get_datagrams_replayed() const
{
    std::lock_guard<std::mutex> lock(d_impl->stats_mutex);
    return d_impl->replayed;
}

} // namespace recv
} // namespace spead
} // namespace gr
