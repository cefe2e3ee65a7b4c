/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// rdma_hostile_peer HOST PORT MODE [LEAVE_FILE]: a peer of a live gr-spead rdma source
// that connects as a gr-spead sender would (rdma_cm, the connect private data of
// transport/rdma/rdma_link.h), then breaks the protocol one way, and waits for the
// source to end the connection (the CM's DISCONNECTED). rdma-case's hostile and
// admission cases run it beside a good sender, which must be unharmed.
//
//   idle            sends nothing (admission: a refused peer is disconnected)
//   oversize-send   a SendRecv message one byte above the granted slot size
//   oversize-write  an RDMA write into the ring one byte above the slot size
//                   (max_packet_size), in bounds of the ring
//   outside         an RDMA write whose immediate names a place in the ring the
//                   source did not expect (not where the credits put the next write)
//   beyond          an RDMA write that runs past the ring's end (the NIC refuses it:
//                   remote access error, both QPs in error)
//   non-spead       a SendRecv message that is not a SPEAD packet
//   scribble        the ring's trust model (issue 38 item 5): by SendRecv, the first
//                   of the two packets of heap 7; then, until LEAVE_FILE exists, RDMA
//                   writes without an immediate (which the source never hears of) over
//                   its whole ring: heap 7's missing packet, a whole one-packet heap 9
//                   and garbage, again and again. The source must deliver neither heap
//                   (7 was never sent whole; 9 never reported), end heap 7 incomplete
//                   when the peer leaves, and read nothing of the ring it was not told
//   malformed       a SendRecv message with a SPEAD header but no PAYLOAD_LENGTH: a
//                   bad packet to count, as a datagram is, not a reason to end the
//                   connection, so the peer stays connected until the source stops,
//                   or (given LEAVE_FILE) until that file exists: then it disconnects
//                   itself (a stop heap ends only its sender's connection, so the
//                   source's stream ends once this peer too has gone)
//
// Prints "granted: ..." once connected, then "disconnected by the source" and exits 0
// when the source ended it within 10 s (idle: or refused it before it was
// established), else says what happened and exits 1.
#include "transport/rdma/rdma_link.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace wire = gr::spead::rdma;

namespace {

/*! A SPEAD-64-48 packet of heap \p cnt (HEAP_SIZE \p heap_size), carrying \p length
 * bytes of item 0x1001 from \p offset, each byte \p fill. */
std::vector<std::uint8_t> spead_packet(std::uint64_t cnt,
                                       std::uint64_t heap_size,
                                       std::uint64_t offset,
                                       std::uint64_t length,
                                       std::uint8_t fill)
{
    const std::uint64_t immediate = std::uint64_t(1) << 63;
    const std::uint64_t pointers[] = {
        immediate | (std::uint64_t(0x0001) << 48) | cnt,       // HEAP_CNT
        immediate | (std::uint64_t(0x0002) << 48) | heap_size, // HEAP_SIZE
        immediate | (std::uint64_t(0x0003) << 48) | offset,    // PAYLOAD_OFFSET
        immediate | (std::uint64_t(0x0004) << 48) | length,    // PAYLOAD_LENGTH
        std::uint64_t(0x1001) << 48,                           // the item, at 0
    };
    std::vector<std::uint8_t> p = { 0x53, 0x04, 2, 6, 0, 0, 0, 5 };
    for (const std::uint64_t word : pointers)
        for (int shift = 56; shift >= 0; shift -= 8)
            p.push_back(std::uint8_t(word >> shift));
    p.insert(p.end(), std::size_t(length), fill);
    return p;
}

[[noreturn]] void die(const std::string& what)
{
    std::fprintf(
        stderr, "rdma_hostile_peer: %s: %s\n", what.c_str(), std::strerror(errno));
    std::exit(2);
}

/*! The next CM event, waiting up to \p ms; nullptr on timeout. */
rdma_cm_event* next_event(rdma_event_channel* channel, int ms)
{
    pollfd pfd{ channel->fd, POLLIN, 0 };
    if (::poll(&pfd, 1, ms) <= 0)
        return nullptr;
    rdma_cm_event* event = nullptr;
    if (rdma_get_cm_event(channel, &event) != 0)
        die("rdma_get_cm_event");
    return event;
}

void expect(rdma_event_channel* channel,
            rdma_cm_event_type type,
            void* data,
            size_t size,
            bool refusal_expected = false)
{
    rdma_cm_event* event = next_event(channel, 10000);
    if (refusal_expected && event &&
        (event->event == RDMA_CM_EVENT_REJECTED ||
         event->event == RDMA_CM_EVENT_CONNECT_ERROR)) {
        // Refused before it was established: what an idle intruder is there for.
        std::printf("refused by the source (%s)\n", rdma_event_str(event->event));
        std::exit(0);
    }
    if (!event || event->event != type) {
        std::fprintf(stderr,
                     "rdma_hostile_peer: expected %s, got %s\n",
                     rdma_event_str(type),
                     event ? rdma_event_str(event->event) : "nothing in 10 s");
        std::exit(2);
    }
    if (data)
        std::memcpy(data,
                    event->param.conn.private_data,
                    std::min<size_t>(size, event->param.conn.private_data_len));
    rdma_ack_cm_event(event);
}

} // namespace

int main(int argc, char** argv)
{
    const std::string mode = argc > 3 ? argv[3] : "";
    const bool leaves = mode == "malformed" || mode == "scribble";
    if (argc != 4 && !(argc == 5 && leaves)) {
        std::fprintf(stderr, "usage: rdma_hostile_peer HOST PORT MODE [LEAVE_FILE]\n");
        return 2;
    }
    rdma_event_channel* channel = rdma_create_event_channel();
    if (!channel)
        die("rdma_create_event_channel");
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(channel, &id, nullptr, RDMA_PS_TCP) != 0)
        die("rdma_create_id");
    sockaddr_in dst{};
    dst.sin_family = AF_INET;
    dst.sin_port = htons(std::uint16_t(std::atoi(argv[2])));
    if (inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1)
        die("inet_pton");
    if (rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr*>(&dst), 5000) != 0)
        die("rdma_resolve_addr");
    expect(channel, RDMA_CM_EVENT_ADDR_RESOLVED, nullptr, 0);
    if (rdma_resolve_route(id, 5000) != 0)
        die("rdma_resolve_route");
    expect(channel, RDMA_CM_EVENT_ROUTE_RESOLVED, nullptr, 0);

    ibv_pd* pd = ibv_alloc_pd(id->verbs);
    ibv_cq* cq = ibv_create_cq(id->verbs, 16, nullptr, nullptr, 0);
    if (!pd || !cq)
        die("ibv_alloc_pd/ibv_create_cq");
    ibv_qp_init_attr attr{};
    attr.send_cq = cq;
    attr.recv_cq = cq;
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = 8;
    attr.cap.max_recv_wr = 1;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    if (rdma_create_qp(id, pd, &attr) != 0)
        die("rdma_create_qp");
    constexpr int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    wire::released credits{};
    ibv_mr* credit_mr = ibv_reg_mr(pd, &credits, sizeof(credits), access);
    if (!credit_mr)
        die("ibv_reg_mr(credits)");
    wire::connect_data mine{};
    mine.magic = wire::wire_magic;
    mine.max_packet_size = 1u << 20;
    mine.credit_address = reinterpret_cast<std::uintptr_t>(&credits);
    mine.credit_rkey = credit_mr->rkey;
    rdma_conn_param param = wire::conn_param(&mine, sizeof(mine));
    if (rdma_connect(id, &param) != 0)
        die("rdma_connect");
    wire::accept_data grant{};
    expect(channel, RDMA_CM_EVENT_ESTABLISHED, &grant, sizeof(grant), mode == "idle");
    std::printf("granted: %u receives of %u bytes, ring %u bytes (depth %u)\n",
                grant.recv_slots,
                grant.slot_size,
                grant.ring_size,
                grant.rdma_depth);
    std::fflush(stdout);

    std::vector<std::uint8_t> payload(std::size_t(grant.slot_size) + 1, 0);
    // Starts like a SPEAD packet (magic 0x53, version 4, 64-48 flavour) so that
    // only the size is wrong in the oversize modes.
    const std::uint8_t header[8] = { 0x53, 0x04, 2, 6, 0, 0, 0, 0 };
    std::memcpy(payload.data(), header, sizeof(header));
    ibv_mr* mr = ibv_reg_mr(pd, payload.data(), payload.size(), IBV_ACCESS_LOCAL_WRITE);
    if (!mr)
        die("ibv_reg_mr(payload)");
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(payload.data());
    sge.lkey = mr->lkey;
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    bool act = true;
    if (mode == "idle") {
        act = false;
    } else if (mode == "oversize-send") {
        sge.length = grant.slot_size + 1;
        wr.opcode = IBV_WR_SEND;
    } else if (mode == "oversize-write" || mode == "outside") {
        const std::uint32_t length = mode == "outside" ? 64 : grant.slot_size + 1;
        if (grant.ring_size < length) {
            std::fprintf(
                stderr, "rdma_hostile_peer: no ring of %u bytes granted\n", length);
            return 2;
        }
        sge.length = length;
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wr.wr.rdma.remote_addr = grant.ring_address;
        wr.wr.rdma.rkey = grant.ring_rkey;
        // The first write belongs at offset 0; "outside" claims the ring's end.
        wr.imm_data = htonl(mode == "outside" ? grant.ring_size - 32 : 0);
    } else if (mode == "beyond") {
        sge.length = 64;
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wr.wr.rdma.remote_addr = grant.ring_address + grant.ring_size - 32;
        wr.wr.rdma.rkey = grant.ring_rkey;
        wr.imm_data = htonl(0);
    } else if (mode == "malformed") {
        // One item pointer, HEAP_CNT 1 as an immediate: no PAYLOAD_LENGTH.
        const std::uint8_t pointer[8] = { 0x80, 0x01, 0, 0, 0, 0, 0, 1 };
        payload[7] = 1;
        std::memcpy(payload.data() + sizeof(header), pointer, sizeof(pointer));
        sge.length = 16;
        wr.opcode = IBV_WR_SEND;
    } else if (mode == "scribble") {
        const std::vector<std::uint8_t> first = spead_packet(7, 2048, 0, 1024, 0x77);
        if (first.size() > payload.size()) {
            std::fprintf(
                stderr, "rdma_hostile_peer: receives of %u bytes\n", grant.slot_size);
            return 2;
        }
        std::memcpy(payload.data(), first.data(), first.size());
        sge.length = std::uint32_t(first.size());
        wr.opcode = IBV_WR_SEND;
    } else if (mode == "non-spead") {
        std::memcpy(payload.data(), "this is not a SPEAD packet at all", 34);
        sge.length = 64;
        wr.opcode = IBV_WR_SEND;
    } else {
        std::fprintf(stderr, "rdma_hostile_peer: unknown mode %s\n", mode.c_str());
        return 2;
    }
    if (act) {
        ibv_send_wr* bad = nullptr;
        if (ibv_post_send(id->qp, &wr, &bad) != 0)
            die("ibv_post_send");
    }
    // A message's completion means the source's queue holds it.
    const auto completed = [&](const char* what) {
        ibv_wc wc{};
        int polled = 0;
        for (int i = 0; i < 10000 && (polled = ibv_poll_cq(cq, 1, &wc)) == 0; i++)
            usleep(1000);
        if (polled != 1 || wc.status != IBV_WC_SUCCESS)
            die(std::string(what) + " was not delivered");
    };
    if (mode == "malformed" || mode == "scribble") {
        // Said once the source can have counted it, so that the good sender goes on
        // only then.
        completed("the first message");
        std::printf("sent the %s message\n", mode.c_str());
        std::fflush(stdout);
    }
    std::vector<std::uint8_t> ring;
    ibv_mr* ring_mr = nullptr;
    if (mode == "scribble") {
        // The ring's image: heap 7's second packet, a whole heap 9 and garbage, over
        // and over; every write unannounced (no immediate: no completion there).
        const std::vector<std::uint8_t> pieces[] = {
            spead_packet(7, 2048, 1024, 1024, 0x77),
            spead_packet(9, 1024, 0, 1024, 0x99),
            std::vector<std::uint8_t>(200, 0x53),
        };
        while (ring.size() < grant.ring_size)
            for (const auto& piece : pieces)
                ring.insert(ring.end(), piece.begin(), piece.end());
        ring.resize(grant.ring_size);
        ring_mr = ibv_reg_mr(pd, ring.data(), ring.size(), IBV_ACCESS_LOCAL_WRITE);
        if (!ring_mr || grant.ring_size == 0)
            die("ibv_reg_mr(ring image), or no ring granted");
    }
    if (argc == 5) {
        unsigned writes = 0;
        for (int i = 0; i < 600 && ::access(argv[4], F_OK) != 0; i++) {
            if (ring_mr) {
                ring[writes % ring.size()] ^= 0xff; // never quite the same image
                ibv_sge whole{ reinterpret_cast<std::uintptr_t>(ring.data()),
                               std::uint32_t(ring.size()),
                               ring_mr->lkey };
                ibv_send_wr write{};
                write.sg_list = &whole;
                write.num_sge = 1;
                write.opcode = IBV_WR_RDMA_WRITE;
                write.send_flags = IBV_SEND_SIGNALED;
                write.wr.rdma.remote_addr = grant.ring_address;
                write.wr.rdma.rkey = grant.ring_rkey;
                ibv_send_wr* bad = nullptr;
                if (ibv_post_send(id->qp, &write, &bad) != 0)
                    die("ibv_post_send(ring image)");
                completed("a write of the ring");
                writes++;
            }
            usleep(50000);
        }
        if (ring_mr)
            std::printf("wrote its whole ring %u times, unannounced\n", writes);
        if (rdma_disconnect(id) != 0)
            die("rdma_disconnect");
        rdma_cm_event* event = next_event(channel, 10000);
        if (!event || event->event != RDMA_CM_EVENT_DISCONNECTED) {
            std::printf("no DISCONNECTED after leaving\n");
            return 1;
        }
        rdma_ack_cm_event(event);
        std::printf("left after %s\n", mode.c_str());
        return 0;
    }
    // The source must end the connection: DISCONNECTED (or the QP's error first).
    for (;;) {
        rdma_cm_event* event = next_event(channel, 10000);
        if (!event) {
            std::printf("still connected 10 s after %s\n", mode.c_str());
            return 1;
        }
        const rdma_cm_event_type type = event->event;
        rdma_ack_cm_event(event);
        if (type == RDMA_CM_EVENT_DISCONNECTED) {
            std::printf("disconnected by the source after %s\n", mode.c_str());
            return 0;
        }
    }
}
