/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Endpoints shared among several receive threads, for the source block's `threads`
// and spead_recv's --threads alike.

#ifndef INCLUDED_SPEAD_TRANSPORT_SPLIT_ENDPOINTS_H
#define INCLUDED_SPEAD_TRANSPORT_SPLIT_ENDPOINTS_H

#include <boost/asio/ip/udp.hpp>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace transport {

/*! The endpoints shared among \p threads readers: by port for udp (a socket serves a
 * port), one by one for ibverbs (a flow each).
 * \throws std::invalid_argument ("threads: ...") when there are fewer than threads */
template <typename Config>
std::vector<Config>
split_endpoints(const Config& whole, std::size_t threads, bool by_port)
{
    if (threads == 1)
        return { whole };
    std::vector<std::vector<boost::asio::ip::udp::endpoint>> shares(threads);
    std::vector<std::uint16_t> ports;
    std::size_t index = 0;
    for (const auto& ep : whole.get_endpoints()) {
        // Round robin over the units: ports for udp, endpoints for ibverbs.
        std::size_t unit = index++;
        if (by_port) {
            const auto found = std::find(ports.begin(), ports.end(), ep.port());
            unit = std::size_t(found - ports.begin());
            if (found == ports.end())
                ports.push_back(ep.port());
        }
        shares[unit % threads].push_back(ep);
    }
    const std::size_t units = by_port ? ports.size() : whole.get_endpoints().size();
    if (units < threads)
        throw std::invalid_argument(
            "threads: " + std::to_string(threads) + " receiver threads but only " +
            std::to_string(units) +
            (by_port ? " distinct UDP port(s) in endpoints (a udp socket, and its "
                       "thread, serves one port); use at most that many threads"
                     : " endpoint(s); use at most that many threads"));
    std::vector<Config> out;
    for (const auto& share : shares) {
        Config c = whole;
        c.set_endpoints(share);
        out.push_back(c);
    }
    return out;
}

} // namespace transport
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_TRANSPORT_SPLIT_ENDPOINTS_H */
