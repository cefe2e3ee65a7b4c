/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "peer_filter.h"
#include <boost/algorithm/string/trim.hpp>
#include <boost/system/error_code.hpp>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

[[noreturn]] void fail(const std::string& entry, const std::string& problem)
{
    throw std::invalid_argument(
        "allowed_peers: \"" + entry + "\" " + problem +
        "; expected a comma-separated list of addresses and networks, e.g. "
        "10.0.0.0/8,192.168.1.5,::1 (empty: every peer)");
}

std::array<std::uint8_t, 16> v6_bytes(const boost::asio::ip::address& a)
{
    if (a.is_v4())
        return boost::asio::ip::make_address_v6(boost::asio::ip::v4_mapped, a.to_v4())
            .to_bytes();
    return a.to_v6().to_bytes();
}

} // namespace

peer_filter::peer_filter(const std::string& text)
{
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string::npos)
            comma = text.size();
        const std::string entry =
            boost::algorithm::trim_copy(text.substr(start, comma - start));
        start = comma + 1;
        if (entry.empty()) {
            if (boost::algorithm::trim_copy(text).empty())
                break;
            fail(text, "has an empty entry");
        }
        const std::size_t slash = entry.find('/');
        const std::string addr_text = entry.substr(0, slash);
        boost::system::error_code ec;
        const auto addr = boost::asio::ip::make_address(addr_text, ec);
        if (ec)
            fail(entry, "is not an IPv4 or IPv6 address (names are not accepted)");
        const unsigned max_bits = addr.is_v4() ? 32 : 128;
        unsigned bits = max_bits;
        if (slash != std::string::npos) {
            const std::string p = entry.substr(slash + 1);
            if (p.empty() || p.size() > 3 ||
                p.find_first_not_of("0123456789") != std::string::npos ||
                std::stoul(p) > max_bits)
                fail(entry,
                     "has a bad prefix length; use /0 to /" + std::to_string(max_bits));
            bits = unsigned(std::stoul(p));
        }
        network n;
        n.bytes = v6_bytes(addr);
        n.prefix_bits = addr.is_v4() ? bits + 96 : bits;
        // Host bits set (10.0.0.1/8) are most likely a typo: refuse rather than guess.
        for (unsigned b = n.prefix_bits; b < 128; b++)
            if (n.bytes[b / 8] & (0x80 >> (b % 8)))
                fail(entry,
                     "has bits set beyond its prefix length; write the network "
                     "address (e.g. 10.0.0.0/8)");
        d_networks.push_back(n);
        if (comma == text.size())
            break;
    }
}

bool peer_filter::allows(const boost::asio::ip::address& peer) const
{
    if (d_networks.empty())
        return true;
    const auto bytes = v6_bytes(peer.is_v6() && peer.to_v6().is_v4_mapped()
                                    ? boost::asio::ip::address(peer.to_v6().to_v4())
                                    : peer);
    for (const network& n : d_networks) {
        unsigned b = 0;
        for (; b + 8 <= n.prefix_bits; b += 8)
            if (bytes[b / 8] != n.bytes[b / 8])
                break;
        if (b + 8 <= n.prefix_bits)
            continue;
        if (b < n.prefix_bits) {
            const std::uint8_t mask = std::uint8_t(0xff << (8 - (n.prefix_bits - b)));
            if ((bytes[b / 8] & mask) != (n.bytes[b / 8] & mask))
                continue;
        }
        return true;
    }
    return false;
}

} // namespace spead
} // namespace gr
