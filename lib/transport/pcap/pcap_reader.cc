/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "pcap_file.h"
#include <gnuradio/spead/recv_pcap.h>
#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

namespace {
/*! Datagrams handed to the stream at once, as the socket reader does. */
constexpr std::size_t batch_size = 64;
} // namespace

struct pcap_reader::impl {
    impl(const std::string& path, std::uint16_t dst_port) : file(path, dst_port)
    {
        views.reserve(batch_size);
    }

    void publish_stats()
    {
        std::lock_guard<std::mutex> lock(stats_mutex);
        stats = file.stats();
        replayed = file.datagrams_kept();
    }

    pcap_file_reader file; //!< reader thread only
    std::vector<packet_view> views;

    mutable std::mutex stats_mutex; //!< guards the snapshot below
    recv_stats stats;
    std::uint64_t replayed = 0;
};

pcap_reader::pcap_reader(stream& owner, const std::string& path, std::uint16_t dst_port)
    : reader(owner), d_impl(std::make_unique<impl>(path, dst_port))
{
}

pcap_reader::~pcap_reader() = default;

void pcap_reader::run()
{
    while (!stopping()) {
        // A file can wait for the consumer, unlike a NIC: replay never overflows the
        // heap queue, however slow the flowgraph.
        const std::size_t free = wait_for_queue_space(std::chrono::milliseconds(100));
        if (free == 0) {
            if (get_stream().is_stopped())
                return;
            continue;
        }
        const std::size_t max_batch =
            std::min(batch_size, std::max<std::size_t>(1, free / 2));
        std::size_t n = 0;
        try {
            n = d_impl->file.next_batch(d_impl->views, max_batch);
        } catch (...) {
            // What was read before the damage is counted; the error ends the stream.
            d_impl->publish_stats();
            throw;
        }
        d_impl->publish_stats();
        if (n == 0)
            return; // end of the capture
        if (!add_packets(d_impl->views.data(), n))
            return; // the stream ended (stop heap or stop())
    }
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
