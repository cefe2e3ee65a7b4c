/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// libFuzzer target over the rdma receive path's message handling (issue 38): the
// input is what a connected peer does, honest or not: RDMA writes anywhere in its
// ring with any immediate and length, SendRecv messages, and an honest sender's
// writes under its credits. The receiver checks each write with ring_tracker (as
// rdma_incoming does) and decodes what it accepts in place. Invariants: an accepted
// write lies wholly in the ring and never over bytes not yet released; an honest
// sender's writes are always accepted; decoding reads only the message's own bytes
// (the ring and the receive slot are allocated to the byte, so ASan sees any read
// beyond); a decoded packet's pointers and payload lie within the message.

#include "protocol/packet_decoder.h"
#include "transport/rdma/rdma_credits.h"
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace gr::spead;

namespace {

constexpr std::uint32_t ring_size = 4096;
constexpr std::uint32_t slot_size = 1024;
constexpr std::uint32_t depth = 8;

struct reader {
    const std::uint8_t* data;
    std::size_t size;
    std::size_t pos = 0;
    bool empty() const { return pos >= size; }
    std::uint32_t take(unsigned bytes)
    {
        std::uint32_t v = 0;
        for (unsigned i = 0; i < bytes; i++)
            v = (v << 8) | (pos < size ? data[pos++] : 0);
        return v;
    }
};

/*! Decodes a message as the reader does; checks what the decoder says it found. */
void decode(const std::uint8_t* message, std::size_t length)
{
    packet_header h;
    if (decode_packet(message, length, h) != decode_result::ok)
        return;
    const std::size_t payload_at = 8 + 8 * std::size_t(h.n_pointers);
    if (payload_at > length || h.payload_length > length - payload_at)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    // Exactly sized, so that ASan reports a read past either.
    std::unique_ptr<std::uint8_t[]> ring(new std::uint8_t[ring_size]());
    std::unique_ptr<std::uint8_t[]> slot(new std::uint8_t[slot_size]());
    rdma::ring_tracker tracker(ring_size);
    rdma::grant g;
    g.recv_slots = 16;
    g.slot_size = slot_size;
    g.ring_size = ring_size;
    g.rdma_depth = depth;
    rdma::send_credits honest(g);
    bool honest_only = true; // the tracker's state is the honest sender's alone
    reader in{ data, size };
    for (int steps = 0; steps < 256 && !in.empty(); steps++) {
        const std::uint32_t op = in.take(1) % 4;
        if (op == 0) { // a hostile write: any place, any length, any immediate
            const std::uint32_t where = in.take(2) % ring_size;
            const std::uint32_t length = in.take(2) % (slot_size + 1);
            const std::uint32_t immediate = in.take(4);
            // The NIC writes only inside the registered ring.
            const std::uint32_t n = std::min(length, ring_size - where);
            for (std::uint32_t i = 0; i < n; i++)
                ring[where + i] = std::uint8_t(in.take(1));
            if (tracker.arrived(immediate, length)) {
                honest_only = false;
                if (std::uint64_t(immediate) + length > ring_size)
                    std::abort();
                decode(ring.get() + immediate, length);
            }
        } else if (op == 1) { // a SendRecv message into a receive
            const std::uint32_t length = in.take(2) % (slot_size + 1);
            for (std::uint32_t i = 0; i < length; i++)
                slot[i] = std::uint8_t(in.take(1));
            decode(slot.get(), length);
        } else if (op == 2) { // the receiver is done with its oldest write
            tracker.release_oldest();
            rdma::released r;
            r.ring_bytes = tracker.released_bytes();
            r.ring_messages = tracker.released_writes();
            r.messages = r.ring_messages;
            if (honest_only && !honest.update(r))
                std::abort();     // the receiver's own counters refused
        } else if (honest_only) { // an honest write under the credits
            const std::uint32_t length = 1 + in.take(2) % ring_size;
            const auto c = honest.choose(length);
            if (c.path != rdma::path::rdma_write)
                continue;
            if (std::uint64_t(c.offset) + length > ring_size)
                std::abort();
            for (std::uint32_t i = 0; i < length; i++)
                ring[c.offset + i] = std::uint8_t(i);
            honest.commit(c, length);
            if (!tracker.arrived(c.offset, length))
                std::abort(); // an honest sender's write refused
            decode(ring.get() + c.offset, length);
        }
    }
    return 0;
}
