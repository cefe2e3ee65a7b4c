/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/spead/recv_chunk.h>

namespace gr {
namespace spead {
namespace recv {

chunk::chunk(std::size_t positions, std::size_t substreams, std::size_t heap_bytes)
    : d_capacity(positions),
      d_substreams(substreams),
      d_heap_bytes(heap_bytes),
      // Not value-initialised: every byte is written (data or zeros) before release.
      d_data(new std::uint8_t[positions * substreams * heap_bytes]),
      d_positions(positions),
      d_fills(positions * substreams, position_fill::missing),
      d_received(positions * substreams, 0)
{
}

} // namespace recv
} // namespace spead
} // namespace gr
