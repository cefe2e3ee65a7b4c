/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "streams/packet_writer.h"
#include <gnuradio/spead/send_tcp.h>
#include <stdexcept>

namespace gr {
namespace spead {
namespace send {

struct tcp_stream::impl : packet_writer {
    std::size_t
    write_packets(const packet*, std::size_t, boost::system::error_code& ec) override
    {
        ec = boost::system::errc::make_error_code(boost::system::errc::not_connected);
        return 0;
    }
};

tcp_stream::tcp_stream(boost::asio::io_context& io,
                       const stream_config& config,
                       const tcp_config&)
    : stream(io, config, 1, std::make_unique<impl>())
{
    throw std::runtime_error("tcp_stream: not implemented yet");
}

tcp_stream::~tcp_stream() = default;

bool tcp_stream::is_connected() const { return false; }

std::size_t tcp_stream::get_granted_buffer_size() const { return 0; }

} // namespace send
} // namespace spead
} // namespace gr
