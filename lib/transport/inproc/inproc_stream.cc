/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::inproc_stream: a packet_writer that copies each packet into its substream's
// inproc_queue.

#include "protocol/packet_writer.h"
#include <gnuradio/spead/send_inproc.h>
#include <boost/asio/error.hpp>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace spead {
namespace send {

namespace {
const std::vector<std::shared_ptr<inproc_queue>>&
checked(const std::vector<std::shared_ptr<inproc_queue>>& queues)
{
    if (queues.empty())
        throw std::invalid_argument(
            "queues: none given; give at least one inproc_queue (one per substream)");
    for (const auto& q : queues)
        if (!q)
            throw std::invalid_argument("queues: a null queue; give inproc_queues");
    return queues;
}
} // namespace

struct inproc_stream::impl : packet_writer {
    explicit impl(const std::vector<std::shared_ptr<inproc_queue>>& queues)
        : queues(checked(queues))
    {
    }

    std::size_t write_packets(const packet* packets,
                              std::size_t n,
                              boost::system::error_code& ec) override
    {
        for (std::size_t i = 0; i < n; i++) {
            const packet& p = packets[i];
            inproc_queue& queue = *queues[p.substream];
            inproc_queue::packet copy = queue.make_packet(p.size);
            std::uint8_t* out = copy.data();
            for (std::size_t k = 0; k < p.n_pieces; k++) {
                std::memcpy(out, p.pieces[k].data, p.pieces[k].length);
                out += p.pieces[k].length;
            }
            if (!queue.add(std::move(copy))) {
                // As spead2: the receiving end has gone, so the heap fails.
                ec = boost::asio::error::operation_aborted;
                return i;
            }
        }
        return n;
    }

    const std::vector<std::shared_ptr<inproc_queue>> queues;
};

inproc_stream::inproc_stream(boost::asio::io_context& io,
                             const stream_config& config,
                             const std::vector<std::shared_ptr<inproc_queue>>& queues)
    : stream(io, config, queues.size(), std::make_unique<impl>(queues))
{
}

const std::vector<std::shared_ptr<inproc_queue>>& inproc_stream::get_queues() const
{
    return static_cast<const impl&>(writer()).queues;
}

} // namespace send
} // namespace spead
} // namespace gr
