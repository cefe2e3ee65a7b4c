/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// rdma::outgoing: the sending end of one rdma connection. Each packet becomes one
// message, copied into a registered send slot (or sent inline when small) and posted
// on the path the receiver's credits allow (send_credits).

#include "rdma_link.h"
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <thread>

namespace gr {
namespace spead {
namespace rdma {

namespace {
/*! How long the destructor lets posted messages complete before disconnecting. */
constexpr auto drain_time = std::chrono::seconds(2);
constexpr int credit_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
/*! The keepalive write's wr_id (messages are numbered from 0). */
constexpr std::uint64_t keepalive_wr_id = ~std::uint64_t(0);

} // namespace

outgoing::outgoing(std::unique_ptr<queue> q,
                   std::size_t max_packet_size,
                   std::size_t depth)
    : d_queue(std::move(q)),
      d_max_packet_size(max_packet_size),
      d_depth(depth),
      d_sizes(depth)
{
    d_slots = ibv::allocate_ring(depth * max_packet_size);
    d_slots_mr = ibv::register_memory(
        d_queue->pd(), d_slots.get(), depth * max_packet_size, IBV_ACCESS_LOCAL_WRITE);
    d_credit_block = ibv::allocate_ring(sizeof(released));
    d_credit_mr = ibv::register_memory(
        d_queue->pd(), d_credit_block.get(), sizeof(released), credit_access);
}

outgoing::~outgoing()
{
    if (d_watcher.joinable()) {
        const std::uint64_t one = 1;
        [[maybe_unused]] auto r = ::write(d_stop_watching.get(), &one, sizeof(one));
        d_watcher.join();
    }
    const auto until = std::chrono::steady_clock::now() + drain_time;
    while (d_completed < d_posted && std::chrono::steady_clock::now() < until &&
           reap() == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    rdma_disconnect(d_queue->id());
}

void outgoing::watch(std::function<void(int)> gone)
{
    d_stop_watching = file_descriptor(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!d_stop_watching)
        return; // no watcher: the loss is seen at the next send, as without one
    d_watcher = std::thread([this, gone = std::move(gone)] {
        pollfd fds[2] = { { d_queue->event_fd(), POLLIN, 0 },
                          { d_stop_watching.get(), POLLIN, 0 } };
        for (;;) {
            if (::poll(fds, 2, -1) < 0 && errno != EINTR)
                return;
            if (fds[1].revents)
                return; // the connection is being destroyed
            if (fds[0].revents && d_queue->peer_gone()) {
                d_gone.store(true);
                gone(ECONNRESET);
                return;
            }
        }
    });
}

bool outgoing::peer_gone()
{
    return d_watcher.joinable() ? d_gone.load(std::memory_order_relaxed)
                                : d_queue->peer_gone();
}

connect_data outgoing::advertise() const
{
    connect_data c{};
    c.magic = wire_magic;
    c.max_packet_size = std::uint32_t(d_max_packet_size);
    c.credit_address = reinterpret_cast<std::uintptr_t>(d_credit_block.get());
    c.credit_rkey = d_credit_mr->rkey;
    return c;
}

void outgoing::set_grant(const accept_data& g, const std::string& describe)
{
    if (g.magic != wire_magic || g.recv_slots == 0)
        throw std::system_error(EPROTO,
                                std::generic_category(),
                                describe + " is not a gr-spead rdma receiver (its accept "
                                           "carried no grant): check the port");
    if (d_max_packet_size > g.slot_size && d_max_packet_size > g.ring_size)
        throw std::system_error(
            EMSGSIZE,
            std::generic_category(),
            "max_packet_size: " + std::to_string(d_max_packet_size) +
                " bytes is above what " + describe + " accepts (" +
                std::to_string(g.slot_size) +
                "): lower the sender's max_packet_size or raise the receiver's");
    d_credits = send_credits(grant{ g.recv_slots,
                                    g.slot_size,
                                    g.ring_address,
                                    g.ring_rkey,
                                    g.ring_size,
                                    g.rdma_depth });
}

int outgoing::reap() const
{
    if (d_failed)
        return d_failed;
    ibv_wc wc[16];
    for (;;) {
        const int n = d_queue->poll(wc, 16);
        if (n < 0)
            return d_failed = n;
        for (int i = 0; i < n; i++) {
            // An RC QP completes its sends in the order they were posted.
            if (wc[i].status != IBV_WC_SUCCESS)
                return d_failed = -wc_errno(wc[i].status);
            if (wc[i].wr_id == keepalive_wr_id) {
                d_probing = false;
                continue;
            }
            d_completed_bytes += d_sizes[d_completed % d_depth];
            d_completed++;
        }
        if (n < 16)
            return 0;
    }
}

std::ptrdiff_t outgoing::unacknowledged() const
{
    reap(); // a failure stays for send() to report; what completed before it counts
    return std::ptrdiff_t(d_posted_bytes - d_completed_bytes);
}

int outgoing::keep_alive()
{
    if (const int err = reap())
        return -err;
    if (d_probing)
        return 0; // the last one has not come back yet: its failure is reported then
    ibv_send_wr wr{};
    wr.wr_id = keepalive_wr_id;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (const int status = ibv_post_send(d_queue->qp(), &wr, &bad))
        return status;
    d_probing = true;
    return 0;
}

std::ptrdiff_t outgoing::send(const send::packet* packets, std::size_t n)
{
    std::size_t taken = 0;
    while (taken < n) {
        const std::ptrdiff_t r = send_one(packets[taken]);
        if (r < 0)
            return taken > 0 ? std::ptrdiff_t(taken) : r; // a failure comes again
        taken++;
    }
    return std::ptrdiff_t(taken);
}

std::ptrdiff_t outgoing::send_one(const send::packet& p)
{
    const std::size_t size = p.size;
    if (const int err = reap())
        return err;
    if (peer_gone())
        return -ECONNRESET;
    if (size > d_max_packet_size)
        return -EMSGSIZE;
    // The receiver's latest counters (RDMA-written into our credit block).
    // Each counter is read whole (the NIC writes them while we read): a torn read
    // could make a counter look larger than the receiver released.
    const auto* block = reinterpret_cast<const released*>(d_credit_block.get());
    released r;
    r.messages = __atomic_load_n(&block->messages, __ATOMIC_ACQUIRE);
    r.ring_bytes = __atomic_load_n(&block->ring_bytes, __ATOMIC_ACQUIRE);
    r.ring_messages = __atomic_load_n(&block->ring_messages, __ATOMIC_ACQUIRE);
    if (!d_credits.update(r))
        return -EPROTO;
    const send_credits::choice c = d_credits.choose(size);
    if (c.path == path::wait || d_posted - d_completed >= d_depth)
        return -EAGAIN;

    const bool inline_send = size <= d_queue->granted_inline();
    std::uint8_t* slot = d_slots.get() + (d_posted % d_depth) * d_max_packet_size;
    std::size_t at = 0;
    for (std::size_t i = 0; i < p.n_pieces; i++) {
        std::memcpy(slot + at, p.pieces[i].data, p.pieces[i].length);
        at += p.pieces[i].length;
    }
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(slot);
    sge.length = std::uint32_t(size);
    sge.lkey = d_slots_mr->lkey;
    ibv_send_wr wr{};
    wr.wr_id = d_posted;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED | (inline_send ? IBV_SEND_INLINE : 0);
    if (c.path == path::rdma_write) {
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wr.imm_data = htonl(c.offset); // where it went
        wr.wr.rdma.remote_addr = d_credits.get_grant().ring_address + c.offset;
        wr.wr.rdma.rkey = d_credits.get_grant().ring_rkey;
    } else {
        wr.opcode = IBV_WR_SEND;
    }
    ibv_send_wr* bad = nullptr;
    const int status = ibv_post_send(d_queue->qp(), &wr, &bad);
    if (status != 0)
        return -status;
    d_credits.commit(c, size);
    d_sizes[d_posted % d_depth] = std::uint32_t(size);
    d_posted++;
    d_posted_bytes += size;
    return 1;
}

} // namespace rdma
} // namespace spead
} // namespace gr
