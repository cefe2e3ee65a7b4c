/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::link_stream: a send stream over a connected_writer. tcp_stream and
// rdma_stream only make their dialers.

#include "connected_writer.h"
#include <gnuradio/spead/send_link.h>

namespace gr {
namespace spead {
namespace send {

link_stream::link_stream(boost::asio::io_context& io,
                         const stream_config& config,
                         std::unique_ptr<link::dialer> d,
                         const link::writer_settings& settings)
    : stream(
          io, config, 1, std::make_unique<link::connected_writer>(std::move(d), settings))
{
    // Here rather than in the writer's constructor: the stream now counts.
    static_cast<link::connected_writer&>(writer()).connect_first();
}

link_stream::~link_stream()
{
    // Before ~stream flushes the queue: no reconnecting, no endless wait for room.
    static_cast<link::connected_writer&>(writer()).abort();
}

const link::connected_writer& link_stream::link_writer() const
{
    return static_cast<const link::connected_writer&>(writer());
}

bool link_stream::is_connected() const { return link_writer().is_connected(); }

std::size_t link_stream::granted_buffer() const { return link_writer().granted_buffer(); }

} // namespace send
} // namespace spead
} // namespace gr
