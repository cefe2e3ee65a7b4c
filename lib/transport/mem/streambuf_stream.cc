/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::streambuf_stream: a packet_writer that appends each packet to a streambuf.

#include "protocol/packet_writer.h"
#include <gnuradio/spead/send_streambuf.h>
#include <boost/asio/error.hpp>

namespace gr {
namespace spead {
namespace send {

struct streambuf_stream::impl : packet_writer {
    explicit impl(std::streambuf& out) : out(out) {}

    std::size_t write_packets(const packet* packets,
                              std::size_t n,
                              boost::system::error_code& ec) override
    {
        for (std::size_t i = 0; i < n; i++) {
            const packet& p = packets[i];
            for (std::size_t k = 0; k < p.n_pieces; k++) {
                const auto length = static_cast<std::streamsize>(p.pieces[k].length);
                if (out.sputn(reinterpret_cast<const char*>(p.pieces[k].data), length) !=
                    length) {
                    ec = boost::asio::error::eof; // as spead2: the buffer is full
                    return i;
                }
            }
        }
        return n;
    }

    std::streambuf& out;
};

streambuf_stream::streambuf_stream(boost::asio::io_context& io,
                                   std::streambuf& streambuf,
                                   const stream_config& config)
    : stream(io, config, 1, std::make_unique<impl>(streambuf))
{
}

} // namespace send
} // namespace spead
} // namespace gr
