/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The rdma transport's flow control, as plain arithmetic (no verbs): what a receiver
// grants a connection, the sender's choice of path per message under those credits,
// and the receiver's check of where RDMA writes landed. docs/architecture.md,
// "rdma: two paths and credits", explains the protocol.

#ifndef INCLUDED_SPEAD_TRANSPORT_RDMA_CREDITS_H
#define INCLUDED_SPEAD_TRANSPORT_RDMA_CREDITS_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>

namespace gr {
namespace spead {
namespace rdma {

/*!
 * What a receiver grants one connection (in rdma_accept's private data): how many
 * receives it keeps posted and how big each is (the SendRecv path), and, when the
 * connection may use the RDMA-write path, a registered ring and how many writes into
 * it may be unreleased at once.
 */
struct grant {
    std::uint32_t recv_slots = 0; //!< receives posted; every message uses one
    std::uint32_t slot_size = 0;  //!< bytes per receive (largest SendRecv message)
    std::uint64_t ring_address = 0;
    std::uint32_t ring_rkey = 0;
    std::uint32_t ring_size = 0;  //!< 0: SendRecv only
    std::uint32_t rdma_depth = 0; //!< writes into the ring unreleased at once
};

/*!
 * What the receiver has handed back, cumulative since the connection began. The
 * receiver RDMA-writes it into the sender's credit block (no receive is consumed, so
 * a credit update can never meet RNR); each field only grows.
 */
struct released {
    std::uint64_t messages = 0;      //!< receives re-posted (both paths)
    std::uint64_t ring_bytes = 0;    //!< ring bytes freed, wrap padding included
    std::uint64_t ring_messages = 0; //!< ring writes freed
};

enum class path { wait, send_recv, rdma_write };

/*! The sender's view: which path the next message takes, and what it consumes. */
class SPEAD_API send_credits
{
public:
    explicit send_credits(const grant& g) : d_grant(g) {}

    struct choice {
        enum path path = path::wait;
        std::uint32_t offset = 0;  //!< rdma_write: where in the ring (the immediate)
        std::uint32_t padding = 0; //!< rdma_write: ring tail skipped to wrap
    };

    /*!
     * The path for a message of \p length bytes: the RDMA write while the ring has
     * room for it in one piece and fewer than rdma_depth writes are unreleased; else
     * SendRecv if it fits a receive; else wait. Every message needs a posted receive
     * (wait when none). Messages keep their order whatever the path: both go through
     * the one queue pair, in order.
     */
    choice choose(std::size_t length) const;
    /*! Takes the credits \p c needs (after the message was posted). */
    void commit(const choice& c, std::size_t length);
    /*! The receiver's latest counters. A value that goes backwards or beyond what was
     * sent is a broken peer: returns false and changes nothing. */
    bool update(const released& r);

    /*! The message is larger than both paths can ever carry. */
    bool never_fits(std::size_t length) const;
    std::uint64_t messages_in_flight() const { return d_sent - d_released.messages; }
    std::uint64_t writes_in_flight() const
    {
        return d_ring_sent - d_released.ring_messages;
    }
    const grant& get_grant() const { return d_grant; }

private:
    grant d_grant;
    released d_released;
    std::uint64_t d_sent = 0;
    std::uint64_t d_ring_sent = 0;
    std::uint64_t d_ring_head = 0; //!< cumulative ring bytes used, padding included
};

/*!
 * The receiver's view of its ring: checks that each write landed where the credits
 * allow (a hostile or broken sender is caught, not trusted) and keeps the cumulative
 * counters the sender needs.
 */
class SPEAD_API ring_tracker
{
public:
    explicit ring_tracker(std::uint32_t ring_size) : d_size(ring_size) {}

    /*! A write of \p length bytes reported at \p offset (the immediate): true when it
     * is the next place in the ring (or 0 after skipping the tail) and inside it. */
    bool arrived(std::uint32_t offset, std::uint32_t length);
    /*! The oldest unreleased write is done with: its bytes (and the padding before
     * it) go back to the sender at the next update. */
    void release_oldest();
    std::uint64_t released_bytes() const { return d_released_bytes; }
    std::uint64_t released_writes() const { return d_released_writes; }

private:
    std::uint32_t d_size;
    std::uint64_t d_head = 0; //!< cumulative bytes arrived, padding included
    std::uint64_t d_released_bytes = 0;
    std::uint64_t d_released_writes = 0;
    // Ends (cumulative) of unreleased writes, oldest first; at most rdma_depth of them.
    static constexpr std::size_t max_pending = 4096;
    std::uint64_t d_ends[max_pending];
    std::size_t d_first = 0;
    std::size_t d_count = 0;
};

} // namespace rdma
} // namespace spead
} // namespace gr

#endif
