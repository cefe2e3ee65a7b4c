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

struct pcap_reader::impl : loop {
    impl(pcap_reader& owner, const std::string& path, std::uint16_t dst_port)
        : owner(owner), file(path, dst_port)
    {
        views.reserve(lossless_batch_packets);
    }

    void run() override;
    recv_stats stats() const override
    {
        std::lock_guard<std::mutex> lock(stats_mutex);
        return stats_now;
    }

    void publish_stats()
    {
        std::lock_guard<std::mutex> lock(stats_mutex);
        stats_now = file.stats();
        replayed = file.datagrams_kept();
    }

    pcap_reader& owner;
    pcap_file_reader file; //!< reader thread only
    std::vector<packet_view> views;

    mutable std::mutex stats_mutex; //!< guards the snapshot below
    recv_stats stats_now;
    std::uint64_t replayed = 0;
};

pcap_reader::pcap_reader(stream& owner, const std::string& path, std::uint16_t dst_port)
    : transport_reader(owner)
{
    set_loop(std::make_unique<impl>(*this, path, dst_port));
}

void pcap_reader::impl::run()
{
    while (!owner.stopping()) {
        // A file can wait for the consumer, unlike a NIC: replay never overflows the
        // heap queue, however slow the flowgraph.
        const std::size_t max_batch =
            owner.lossless_batch(lossless_batch_packets, std::chrono::milliseconds(100));
        if (max_batch == 0) {
            if (owner.get_stream().is_stopped())
                return;
            continue;
        }
        std::size_t n = 0;
        try {
            n = file.next_batch(views, max_batch);
        } catch (...) {
            // What was read before the damage is counted; the error ends the stream.
            publish_stats();
            throw;
        }
        publish_stats();
        if (n == 0)
            return; // end of the capture
        if (!owner.add_packets(views.data(), n))
            return; // the stream ended (stop heap or stop())
    }
}

std::uint64_t pcap_reader::get_datagrams_replayed() const
{
    const impl& i = loop_as<impl>();
    std::lock_guard<std::mutex> lock(i.stats_mutex);
    return i.replayed;
}

} // namespace recv
} // namespace spead
} // namespace gr
