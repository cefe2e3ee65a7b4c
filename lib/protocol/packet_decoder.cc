/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "packet_decoder.h"

namespace gr {
namespace spead {

recv_stat stat_for(decode_result r)
{
    switch (r) {
    case decode_result::truncated:
        return recv_stat::packets_truncated;
    case decode_result::size_mismatch:
        return recv_stat::packets_size_mismatch;
    case decode_result::bad_header:
        return recv_stat::packets_bad_header;
    case decode_result::bad_specials:
        return recv_stat::packets_bad_specials;
    case decode_result::bad_offset:
        return recv_stat::packets_bad_offset;
    case decode_result::ok:
        break;
    }
    return recv_stat::packets;
}

} // namespace spead
} // namespace gr
