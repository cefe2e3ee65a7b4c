/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// recv::buffer_reader: packets back to back in memory, to the stream's packet path.

#include "protocol/frame_decoder.h"
#include <gnuradio/spead/recv_buffer.h>
#include <chrono>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

struct buffer_reader::impl : loop {
    impl(buffer_reader& owner,
         const std::uint8_t* data,
         std::size_t size,
         std::shared_ptr<const void> keep)
        : owner(owner), keep(std::move(keep))
    {
        // Found once, before the stream starts the reader: its loop only hands over.
        std::size_t offset = 0;
        while (offset < size) {
            const frame f = next_frame(data + offset, size - offset, size - offset);
            if (f.status != frame_status::packet)
                break;
            views.push_back({ data + offset, f.size });
            offset += f.size;
        }
        whole_packets = views.size();
        if (offset < size) // not a packet: the stream's decoder counts why
            views.push_back({ data + offset, size - offset });
    }

    void run() override
    {
        std::size_t next = 0;
        while (next < views.size() && !owner.stopping()) {
            std::size_t n = owner.lossless_batch(lossless_batch_packets,
                                                 std::chrono::milliseconds(100));
            if (n == 0) {
                if (owner.get_stream().is_stopped())
                    return;
                continue;
            }
            n = std::min(n, views.size() - next);
            if (!owner.add_packets(views.data() + next, n))
                return;
            next += n;
        }
    }

    buffer_reader& owner;
    std::shared_ptr<const void> keep;
    std::vector<packet_view> views;
    std::size_t whole_packets = 0;
};

buffer_reader::buffer_reader(stream& owner,
                             const std::uint8_t* data,
                             std::size_t size,
                             std::shared_ptr<const void> keep)
    : transport_reader(owner)
{
    set_loop(std::make_unique<impl>(*this, data, size, std::move(keep)));
}

std::size_t buffer_reader::get_packets() const { return loop_as<impl>().whole_packets; }

} // namespace recv
} // namespace spead
} // namespace gr
