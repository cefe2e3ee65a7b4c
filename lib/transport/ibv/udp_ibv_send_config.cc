/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::udp_ibv_config: the setters of its own (those it shares with the receiver are
// in udp_ibv_config_base.cc). What can only be checked against the device (buffer
// limits, overlapping regions, the MTU) is checked when the stream is built.

#include "transport/config_checks.h"
#include <gnuradio/spead/send_udp_ibv.h>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {
namespace send {

udp_ibv_config& udp_ibv_config::set_ttl(int ttl)
{
    d_ttl = transport::checked_ttl(ttl);
    return *this;
}

namespace {
void check_region(const void* ptr, std::size_t size, std::size_t index)
{
    const std::string which = "memory_regions: region " + std::to_string(index);
    if (ptr == nullptr)
        throw std::invalid_argument(which + " has a null pointer; give the start of "
                                            "memory that items will live in");
    if (size == 0)
        throw std::invalid_argument(which + " has size 0; give its length in bytes");
    if (reinterpret_cast<std::uintptr_t>(ptr) + size <
        reinterpret_cast<std::uintptr_t>(ptr))
        throw std::invalid_argument(which + " wraps around the address space; check "
                                            "its size");
}
} // namespace

udp_ibv_config&
udp_ibv_config::set_memory_regions(const std::vector<memory_region>& regions)
{
    for (std::size_t i = 0; i < regions.size(); i++)
        check_region(regions[i].first, regions[i].second, i);
    d_memory_regions = regions;
    return *this;
}

udp_ibv_config& udp_ibv_config::add_memory_region(const void* ptr, std::size_t size)
{
    check_region(ptr, size, d_memory_regions.size());
    d_memory_regions.emplace_back(ptr, size);
    return *this;
}

} // namespace send
} // namespace spead
} // namespace gr
