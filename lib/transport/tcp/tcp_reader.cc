/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/spead/recv_tcp.h>
#include <stdexcept>

namespace gr {
namespace spead {
namespace recv {

struct tcp_reader::impl {
};

tcp_reader::tcp_reader(stream& owner, const tcp_config&) : reader(owner)
{
    throw std::runtime_error("tcp_reader: not implemented yet");
}

tcp_reader::~tcp_reader() = default;

recv_stats tcp_reader::transport_stats() const { return recv_stats(); }

boost::asio::ip::tcp::endpoint tcp_reader::get_bound_endpoint() const { return {}; }

std::size_t tcp_reader::get_num_connections() const { return 0; }

void tcp_reader::run() {}

void tcp_reader::wake() {}

} // namespace recv
} // namespace spead
} // namespace gr
