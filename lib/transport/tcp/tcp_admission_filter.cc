/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "tcp_admission_filter.h"
#include <sys/socket.h>
#include <system_error>
#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace gr {
namespace spead {
namespace transport {

namespace {

constexpr std::uint32_t keep = 0xffffffff;
constexpr std::uint32_t drop = 0;

sock_filter statement(std::uint16_t code, std::uint32_t k)
{
    return sock_filter{ code, 0, 0, k };
}

sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf)
{
    return sock_filter{ code, jt, jf, k };
}

/*! The 32-bit mask of word \p w (0..3, big-endian) of a 128-bit prefix of \p bits. */
std::uint32_t word_mask(unsigned bits, unsigned w)
{
    const unsigned first = 32 * w;
    if (bits <= first)
        return 0;
    if (bits >= first + 32)
        return 0xffffffff;
    return std::uint32_t(0xffffffff) << (32 - (bits - first));
}

std::uint32_t word_of(const peer_filter::network& n, unsigned w)
{
    const auto* b = n.bytes.data() + 4 * w;
    return (std::uint32_t(b[0]) << 24) | (std::uint32_t(b[1]) << 16) |
           (std::uint32_t(b[2]) << 8) | b[3];
}

/*! Loads the source address's word \p offset bytes into the IP header. */
sock_filter load_source_word(unsigned offset)
{
    return statement(BPF_LD | BPF_W | BPF_ABS, std::uint32_t(SKF_NET_OFF) + offset);
}

/*! Keeps the segment when word \p w of the source (IPv4: its address) matches
 * \p n's under \p mask; else goes on to what follows. */
void match_word(std::vector<sock_filter>& p,
                unsigned offset,
                std::uint32_t mask,
                std::uint32_t value,
                std::uint8_t skip_if_different)
{
    p.push_back(load_source_word(offset));
    p.push_back(statement(BPF_ALU | BPF_AND | BPF_K, mask));
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, value & mask, 0, skip_if_different));
}

/*! IPv4 segments: an IPv4 peer is ::ffff:a.b.c.d to peer_filter. */
std::vector<sock_filter> ipv4_checks(const peer_filter& allowed)
{
    static constexpr std::uint32_t mapped[3] = { 0, 0, 0xffff };
    std::vector<sock_filter> p;
    for (const auto& n : allowed.networks()) {
        bool possible = true; // its first 96 bits can be those of a mapped address
        for (unsigned w = 0; w < 3; w++) {
            const std::uint32_t mask = word_mask(n.prefix_bits, w);
            possible &= (word_of(n, w) & mask) == (mapped[w] & mask);
        }
        if (!possible)
            continue;
        const std::uint32_t mask = word_mask(n.prefix_bits, 3);
        if (mask != 0)
            match_word(p, 12, mask, word_of(n, 3), 1);
        p.push_back(statement(BPF_RET | BPF_K, keep));
    }
    p.push_back(statement(BPF_RET | BPF_K, drop));
    return p;
}

std::vector<sock_filter> ipv6_checks(const peer_filter& allowed)
{
    std::vector<sock_filter> p;
    for (const auto& n : allowed.networks()) {
        unsigned words = 0;
        for (unsigned w = 0; w < 4; w++)
            words += word_mask(n.prefix_bits, w) != 0;
        unsigned left = words;
        for (unsigned w = 0; w < 4; w++) {
            const std::uint32_t mask = word_mask(n.prefix_bits, w);
            if (mask == 0)
                continue;
            left--;
            // A mismatch skips the other words' checks and this entry's keep.
            match_word(p, 8 + 4 * w, mask, word_of(n, w), std::uint8_t(3 * left + 1));
        }
        p.push_back(statement(BPF_RET | BPF_K, keep));
    }
    p.push_back(statement(BPF_RET | BPF_K, drop));
    return p;
}

/*! Appends \p section, run when the IP version (in A) is \p version. */
void append_for_version(std::vector<sock_filter>& p,
                        std::uint32_t version,
                        const std::vector<sock_filter>& section)
{
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, version, 1, 0));
    p.push_back(statement(BPF_JMP | BPF_JA, std::uint32_t(section.size())));
    p.insert(p.end(), section.begin(), section.end());
}

} // namespace

std::vector<sock_filter> data_hold_program(const peer_filter& allowed, bool everyone)
{
    std::vector<sock_filter> p = {
        // A socket filter on TCP sees the segment from its TCP header on: payload
        // bytes = length - data offset * 4.
        statement(BPF_LD | BPF_B | BPF_ABS, 12),
        statement(BPF_ALU | BPF_RSH | BPF_K, 2),
        statement(BPF_ALU | BPF_AND | BPF_K, 0x3c),
        statement(BPF_MISC | BPF_TAX, 0),
        statement(BPF_LD | BPF_W | BPF_LEN, 0),
        jump(BPF_JMP | BPF_JGT | BPF_X, 0, 1, 0),
        statement(BPF_RET | BPF_K, keep), // no data: the handshake, ACKs, FIN, RST
    };
    if (everyone) {
        p.push_back(statement(BPF_RET | BPF_K, drop));
        return p;
    }
    // Data: kept from allowed peers only. The IP version is the top nibble of the
    // network header's first byte.
    p.push_back(statement(BPF_LD | BPF_B | BPF_ABS, std::uint32_t(SKF_NET_OFF)));
    p.push_back(statement(BPF_ALU | BPF_RSH | BPF_K, 4));
    append_for_version(p, 4, ipv4_checks(allowed));
    append_for_version(p, 6, ipv6_checks(allowed));
    p.push_back(statement(BPF_RET | BPF_K, drop));
    return p;
}

admission_filter::admission_filter(int listen_fd, const peer_filter& allowed)
    : d_fd(listen_fd), d_everyone(data_hold_program(allowed, true))
{
    if (allowed.restricts()) {
        d_outsiders = data_hold_program(allowed, false);
        // A list too long for one program (thousands of entries) is checked at
        // accept() only: those peers' first bytes may then be acknowledged.
        if (d_outsiders.size() > BPF_MAXINSNS)
            d_outsiders.clear();
    }
    hold(false);
}

void admission_filter::attach(const std::vector<sock_filter>* program)
{
    if (program == d_attached)
        return;
    if (program) {
        sock_fprog prog{ static_cast<unsigned short>(program->size()),
                         const_cast<sock_filter*>(program->data()) };
        if (setsockopt(d_fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) != 0)
            throw std::system_error(
                errno, std::generic_category(), "setsockopt SO_ATTACH_FILTER");
    } else {
        int unused = 0;
        if (setsockopt(d_fd, SOL_SOCKET, SO_DETACH_FILTER, &unused, sizeof(unused)) !=
                0 &&
            errno != ENOENT)
            throw std::system_error(
                errno, std::generic_category(), "setsockopt SO_DETACH_FILTER");
    }
    d_attached = program;
    d_ever_attached |= program != nullptr;
}

void admission_filter::hold(bool held)
{
    attach(held ? &d_everyone : (d_outsiders.empty() ? nullptr : &d_outsiders));
}

void admission_filter::admit(int fd) const
{
    // Whichever filter it inherited (none, if the listener had none when it came).
    if (!d_ever_attached)
        return;
    int unused = 0;
    setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &unused, sizeof(unused));
}

} // namespace transport
} // namespace spead
} // namespace gr
