/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TESTS_GENERAL_PATH_H
#define INCLUDED_SPEAD_TESTS_GENERAL_PATH_H

#include "protocol/heap_assembler.h"

namespace spead_test {

/*!
 * What heap_assembler::add_packet does, without its fast paths: decode_packet, then
 * add_decoded, counting what is rejected or comes after the stop. Tests feed the same
 * datagrams to add_packet and to this and require the same heaps and counters.
 */
inline bool add_by_general_path(gr::spead::recv::heap_assembler& assembler,
                                const std::uint8_t* data,
                                std::size_t size)
{
    using namespace gr::spead;
    if (assembler.is_stopped()) {
        assembler.stats()[recv_stat::packets_after_stop]++;
        return false;
    }
    packet_header packet;
    const decode_result result = decode_packet(data, size, packet);
    if (result != decode_result::ok) {
        assembler.stats()[stat_for(result)]++;
        return true;
    }
    return assembler.add_decoded(packet);
}

} // namespace spead_test

#endif
