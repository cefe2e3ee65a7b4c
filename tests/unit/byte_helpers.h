/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Test helpers: bytes from hex text, and packets gathered from packetiser pieces.

#ifndef INCLUDED_SPEAD_TESTS_BYTE_HELPERS_H
#define INCLUDED_SPEAD_TESTS_BYTE_HELPERS_H

#include "protocol/packetiser.h"
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace spead_test {

/*! "53 04 03 05" or "53040305" → bytes (spaces ignored). */
inline std::vector<std::uint8_t> from_hex(const std::string& text)
{
    std::vector<std::uint8_t> out;
    int high = -1;
    for (const char c : text) {
        if (c == ' ' || c == '\n')
            continue;
        int v;
        if (c >= '0' && c <= '9')
            v = c - '0';
        else if (c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else
            throw std::invalid_argument("from_hex: bad digit");
        if (high < 0) {
            high = v;
        } else {
            out.push_back(std::uint8_t(high * 16 + v));
            high = -1;
        }
    }
    return out;
}

inline std::vector<std::uint8_t> bytes_of(const std::string& text)
{
    return std::vector<std::uint8_t>(text.begin(), text.end());
}

/*! Concatenates the pieces of one packet. */
inline std::vector<std::uint8_t>
gather(const std::vector<gr::spead::send::packet_piece>& pieces, std::size_t first = 0)
{
    std::vector<std::uint8_t> out;
    for (std::size_t i = first; i < pieces.size(); i++)
        out.insert(out.end(), pieces[i].data, pieces[i].data + pieces[i].length);
    return out;
}

/*! Every packet of a heap, each as contiguous bytes. */
inline std::vector<std::vector<std::uint8_t>>
packetise(const gr::spead::send::heap& h, std::uint64_t cnt, std::size_t max_packet_size)
{
    gr::spead::send::packet_generator gen(h, cnt, max_packet_size);
    std::vector<std::uint8_t> header(max_packet_size);
    std::vector<gr::spead::send::packet_piece> pieces;
    std::vector<std::vector<std::uint8_t>> packets;
    while (gen.has_next()) {
        pieces.clear();
        const std::size_t size = gen.next(header.data(), pieces);
        packets.push_back(gather(pieces));
        if (packets.back().size() != size)
            throw std::logic_error("packetise: pieces do not add up to the packet size");
    }
    return packets;
}

} // namespace spead_test

#endif
