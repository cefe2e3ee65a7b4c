/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The wire between two emulated RC queue pairs: a TCP connection from the requester to
// the responder's listening socket, over the hosts' real interfaces. Each RC QP
// listens on its own port, and its qp_num is derived from that port, so a peer finds
// it from exactly what applications exchange (the GID, which holds an IPv4 address,
// and dest_qp_num). Requests (sends, RDMA writes) go one way, one message each with a
// PSN; acknowledgements, NAKs and RDMA read responses come back on the same connection.
#ifndef SPEAD_EMU_RC_WIRE_H
#define SPEAD_EMU_RC_WIRE_H

#include <netinet/in.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace spead_emu {
namespace rc_wire {

using clock = std::chrono::steady_clock;

enum class kind : uint32_t {
    hello = 1, // first on a connection: source_qpn and the responder's qpn in detail
    send,
    send_with_imm,
    write,
    write_with_imm,
    ack,             // psn: every request up to and including it was executed
    nak_rnr,         // no receive posted for psn; detail: the responder's min_rnr_timer
    nak_access,      // rkey, bounds or access flags refused the write at psn
    nak_invalid,     // the message at psn does not fit the receive (invalid request)
    nak_operational, // the responder failed for its own reasons (remote operational)
    read,            // an RDMA read of detail bytes (the request carries no payload)
    read_response,   // the bytes read, as its payload; acknowledges the read
    probe            // no request: bytes in flight while an acknowledgement is late
};

struct header {
    uint32_t magic;
    kind type;
    uint32_t psn; // 24 bits, as on the wire
    uint32_t length;
    uint64_t remote_addr;
    uint32_t rkey;
    uint32_t imm; // network byte order, as in ibv_send_wr and ibv_wc
    uint32_t source_qpn;
    uint32_t detail;
};
constexpr uint32_t header_magic = 0x31454352; // "RCE1"

// qp_num <-> listening TCP port. The top bit of the 24-bit space keeps RC QP numbers
// apart from the raw-packet QPs' counter.
constexpr uint32_t qp_num_of_port(uint16_t port) { return 0x800000u | port; }
constexpr uint16_t port_of_qp_num(uint32_t qp_num) { return qp_num & 0xffff; }
constexpr bool is_rc_qp_num(uint32_t qp_num) { return (qp_num & 0xff0000) == 0x800000; }

// PSN arithmetic modulo 2^24.
constexpr uint32_t psn_mask = 0xffffff;
constexpr uint32_t next_psn(uint32_t psn) { return (psn + 1) & psn_mask; }
// Whether a comes before b (within half the PSN space).
constexpr bool psn_before(uint32_t a, uint32_t b)
{
    return a != b && ((b - a) & psn_mask) < 0x800000;
}

// The local ACK timeout of ibv_qp_attr.timeout: 4.096 us * 2^timeout; 0 is infinite.
clock::duration ack_timeout(uint8_t timeout);
// The RNR NAK timer of ibv_qp_attr.min_rnr_timer (the IB spec's table).
clock::duration rnr_delay(uint8_t min_rnr_timer);

// A listening TCP socket on an ephemeral port of every address: the fd, or -1 with
// errno. \p port receives the port.
int listen_on_ephemeral_port(uint16_t& port);
// Non-blocking connect to address:port: the fd (connection in progress), or -1.
int start_connect(in_addr address, uint16_t port);

// Waits until \p fd is ready for \p events (poll's): false on \p stop_fd readable,
// the deadline or a poll error.
bool wait_until_ready(int fd, short events, int stop_fd, clock::time_point deadline);

// Blocking reads and writes that give up when \p stop_fd becomes readable, the peer
// goes (EOF, error) or \p deadline passes: true when all bytes moved.
bool read_all(
    int fd, void* buffer, size_t length, int stop_fd, clock::time_point deadline);
bool write_all(
    int fd, const void* buffer, size_t length, int stop_fd, clock::time_point deadline);

} // namespace rc_wire
} // namespace spead_emu

#endif
