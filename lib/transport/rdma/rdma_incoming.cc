/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// rdma::incoming: the receiving end of one rdma connection. Messages land in posted
// receives (SendRecv) or in the ring (RDMA write with immediate = offset); their
// views go to the stream as they are, and released memory goes back to the sender as
// credits, RDMA-written (inline) into its credit block.

#include "protocol/packet_decoder.h"
#include "rdma_link.h"
#include <netinet/in.h>
#include <cerrno>
#include <cstring>

namespace gr {
namespace spead {
namespace rdma {

namespace {
/*! Idle connections get a credit write this often: a dead sender fails it (RC retry
 * exhaustion) even when it sends nothing. */
constexpr std::chrono::milliseconds keepalive_period{ 1000 };
/*! Credit writes in flight at most (reaped in receive()). */
constexpr std::size_t max_credit_writes = 16;
/*! Inline credit writes ask for a completion one in this many: RC completes a
 * queue's sends in order, so one completion reaps those before it, and the others
 * wake the reader for nothing. A write that fails completes whether asked or not. */
constexpr std::size_t credit_writes_per_completion = max_credit_writes / 2;
/*! A credit write's wr_id: this bit, and how many writes its completion reaps. */
constexpr std::uint64_t credit_flag = std::uint64_t(1) << 63;
/*! How long a flushed receive waits for the CM's DISCONNECTED before it counts as a
 * lost connection rather than a closed one. */
constexpr std::chrono::milliseconds disconnect_wait{ 200 };
/*! Receives are written by this NIC only (their rkey is never granted): a peer can
 * write nowhere but its ring. */
constexpr int slots_access = IBV_ACCESS_LOCAL_WRITE;
constexpr int ring_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

} // namespace

incoming::incoming(std::unique_ptr<queue> q,
                   const listen_settings& s,
                   bool use_ring,
                   std::shared_ptr<std::size_t> ring_users)
    : d_queue(std::move(q)),
      d_slot_size(s.max_packet_size),
      d_tracker(use_ring ? std::uint32_t(s.rdma_depth * s.max_packet_size) : 0),
      d_last_write(std::chrono::steady_clock::now())
{
    // What fails here (memory, registration, posting) rejects the request before the
    // queue and its id go: the peer is told no (REJECTED), not left unreachable.
    try {
        const std::size_t slots_bytes = s.recv_depth * d_slot_size;
        d_slots = ibv::allocate_ring(slots_bytes);
        d_slots_mr =
            ibv::register_memory(d_queue->pd(), d_slots.get(), slots_bytes, slots_access);
        d_grant.magic = wire_magic;
        d_grant.recv_slots = std::uint32_t(s.recv_depth);
        d_grant.slot_size = std::uint32_t(d_slot_size);
        if (use_ring) {
            const std::size_t ring_bytes = s.rdma_depth * s.max_packet_size;
            d_ring = ibv::allocate_ring(ring_bytes);
            d_ring_mr = ibv::register_memory(
                d_queue->pd(), d_ring.get(), ring_bytes, ring_access);
            d_grant.ring_address = reinterpret_cast<std::uintptr_t>(d_ring.get());
            d_grant.ring_rkey = d_ring_mr->rkey;
            d_grant.ring_size = std::uint32_t(ring_bytes);
            d_grant.rdma_depth = std::uint32_t(s.rdma_depth);
            d_ring_users = std::move(ring_users);
            ++*d_ring_users;
        }
        // Every receive is posted before the peer may send (before rdma_accept).
        d_to_repost.reserve(s.recv_depth);
        for (std::uint32_t i = 0; i < s.recv_depth; i++)
            d_to_repost.push_back(i);
        post_receives(d_to_repost.data(), d_to_repost.size());
        d_to_repost.clear();
    } catch (...) {
        if (d_ring_users) // the destructor, which gives the ring back, will not run
            --*d_ring_users;
        rdma_reject(d_queue->id(), nullptr, 0);
        throw;
    }
}

incoming::~incoming()
{
    if (d_ring_users)
        --*d_ring_users;
    rdma_disconnect(d_queue->id());
}

void incoming::set_peer(const connect_data& peer)
{
    d_peer = peer;
    d_established = true;
    d_queue->start_timer(keepalive_period);
}

void incoming::post_receives(const std::uint32_t* slots, std::size_t n)
{
    // Chained, a batch per ibv_post_recv: one doorbell for the batch on a real NIC.
    constexpr std::size_t batch = 32;
    ibv_sge sge[batch];
    ibv_recv_wr wr[batch];
    for (std::size_t first = 0; first < n; first += batch) {
        const std::size_t count = std::min(batch, n - first);
        for (std::size_t i = 0; i < count; i++) {
            const std::uint32_t slot = slots[first + i];
            sge[i].addr =
                reinterpret_cast<std::uintptr_t>(d_slots.get() + slot * d_slot_size);
            sge[i].length = std::uint32_t(d_slot_size);
            sge[i].lkey = d_slots_mr->lkey;
            wr[i] = ibv_recv_wr{};
            wr[i].wr_id = slot;
            wr[i].sg_list = &sge[i];
            wr[i].num_sge = 1;
            wr[i].next = i + 1 < count ? &wr[i + 1] : nullptr;
        }
        ibv_recv_wr* bad = nullptr;
        // Fails only in the error state, which the CQ reports.
        ibv_post_recv(d_queue->qp(), wr, &bad);
    }
}

void incoming::send_credits()
{
    if (d_writes_outstanding >= max_credit_writes || !d_established)
        return; // the next release carries the cumulative counters
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(&d_released);
    sge.length = sizeof(d_released);
    const bool inline_write = d_queue->granted_inline() >= sizeof(d_released);
    if (!inline_write && d_writes_outstanding > 0)
        return; // without inline, d_released must not change under a write
    // Without inline every write is signalled: the next must wait for its completion.
    const bool signalled =
        !inline_write || d_writes_unsignalled + 1 >= credit_writes_per_completion;
    ibv_send_wr wr{};
    wr.wr_id = credit_flag | (d_writes_unsignalled + 1);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE; // consumes no receive at the sender: no RNR
    wr.send_flags =
        (signalled ? IBV_SEND_SIGNALED : 0) | (inline_write ? IBV_SEND_INLINE : 0);
    wr.wr.rdma.remote_addr = d_peer.credit_address;
    wr.wr.rdma.rkey = d_peer.credit_rkey;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(d_queue->qp(), &wr, &bad) == 0) {
        d_writes_outstanding++;
        d_writes_unsignalled = signalled ? 0 : d_writes_unsignalled + 1;
        d_advertised = d_released;
        d_last_write = std::chrono::steady_clock::now();
    }
}

std::ptrdiff_t incoming::fail(std::size_t got, int err)
{
    if (got == 0)
        return err;
    d_error = err; // the messages before it go first
    return std::ptrdiff_t(got);
}

std::ptrdiff_t incoming::receive(recv::packet_view* packets, std::size_t n)
{
    if (d_error)
        return d_error;
    if (d_queue->peer_gone())
        d_peer_gone = true;
    if (d_queue->timer_fired() &&
        std::chrono::steady_clock::now() - d_last_write >= keepalive_period)
        send_credits(); // the keepalive: fails with RC retry exhaustion if peer is dead
    constexpr int batch = 16;
    ibv_wc wc[batch];
    std::size_t got = 0;
    while (got < n) {
        const int asked = int(std::min<std::size_t>(batch, n - got));
        const int polled = d_queue->poll(wc, asked);
        if (polled < 0)
            return polled;
        for (int i = 0; i < polled; i++) {
            const ibv_wc& w = wc[i];
            const bool credit = (w.wr_id & credit_flag) != 0;
            if (credit)
                d_writes_outstanding -= std::min<std::size_t>(
                    d_writes_outstanding, std::size_t(w.wr_id & ~credit_flag));
            if (w.status != IBV_WC_SUCCESS) {
                // A receive flushed, or a credit write cut, by the peer's disconnect
                // is a clean close; otherwise the connection was lost.
                if ((credit || w.status == IBV_WC_WR_FLUSH_ERR) &&
                    (d_peer_gone ||
                     (d_peer_gone = d_queue->wait_peer_gone(disconnect_wait))))
                    return got ? std::ptrdiff_t(got) : 0; // closed after its last message
                return -wc_errno(w.status);
            }
            if (credit)
                continue;
            const std::uint8_t* data;
            if (w.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
                const std::uint32_t offset = ntohl(w.imm_data);
                if (!d_ring || !d_tracker.arrived(offset, w.byte_len))
                    return fail(got, -EPROTO); // a write outside what was granted
                data = d_ring.get() + offset;
                d_ring_to_release++;
            } else {
                data = d_slots.get() + w.wr_id * d_slot_size;
            }
            d_to_repost.push_back(std::uint32_t(w.wr_id));
            // The ring holds rdma_depth messages: one may be longer than a receive
            // (max_packet_size) only if the peer ignored what it was granted.
            if (w.byte_len > d_slot_size)
                return fail(got, -EMSGSIZE);
            // The transport frames messages, so one that is a malformed SPEAD packet
            // is the assembler's to count (as a datagram is); one that is not SPEAD
            // at all means the peer is not a SPEAD sender.
            if (!is_spead_header(data, w.byte_len))
                return fail(got, -EBADMSG);
            packets[got++] = { data, w.byte_len };
        }
        if (polled < asked)
            break; // drained: a completion from now on arrives with an event
    }
    if (got > 0)
        return std::ptrdiff_t(got);
    if (d_peer_gone)
        return 0;
    return -EAGAIN;
}

std::string incoming::describe_ending(std::ptrdiff_t result) const
{
    if (result == -EPROTO)
        return "it broke the rdma protocol (a write outside the ring it was granted): is "
               "it a gr-spead rdma sender of this version?";
    if (result == -EBADMSG)
        return "it sent a message that is not a SPEAD packet (wrong magic, version or "
               "widths): is it a SPEAD sender?";
    if (result == -EMSGSIZE)
        return "it sent a message above max_packet_size (" + std::to_string(d_slot_size) +
               "): raise max_packet_size to the sender's packet size";
    return link::incoming::describe_ending(result);
}

void incoming::release()
{
    for (; d_ring_to_release > 0; d_ring_to_release--)
        d_tracker.release_oldest();
    d_released.ring_bytes = d_tracker.released_bytes();
    d_released.ring_messages = d_tracker.released_writes();
    // Batched: a credit write once a quarter of the receives (or of the ring's
    // writes) came back, so a steady stream costs one write per several messages.
    // The receives are posted then, all in one chain: until the credit write the
    // sender cannot use them anyway.
    const std::uint64_t slots_back =
        d_released.messages + d_to_repost.size() - d_advertised.messages;
    const std::uint64_t writes_back =
        d_released.ring_messages - d_advertised.ring_messages;
    if (slots_back * 4 >= d_grant.recv_slots ||
        (d_grant.rdma_depth && writes_back * 4 >= d_grant.rdma_depth)) {
        post_receives(d_to_repost.data(), d_to_repost.size());
        d_released.messages += d_to_repost.size();
        d_to_repost.clear();
        send_credits();
    }
}

} // namespace rdma
} // namespace spead
} // namespace gr
