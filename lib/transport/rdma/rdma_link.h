/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The rdma transport's connections: an RC queue pair per connection, set up with
// rdma_cm, carrying the connected-link layer's messages (transport/link/connection.h).

#ifndef INCLUDED_SPEAD_TRANSPORT_RDMA_LINK_H
#define INCLUDED_SPEAD_TRANSPORT_RDMA_LINK_H

#include "common/file_descriptor.h"
#include "rdma_credits.h"
#include "transport/ibv/verbs.h"
#include "transport/link/connection.h"
#include <gnuradio/spead/api.h>
#include <rdma/rdma_cma.h>
#include <boost/asio/ip/address_v4.hpp>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gr {
namespace spead {
namespace rdma {

struct SPEAD_API event_channel_deleter {
    void operator()(rdma_event_channel* c) const { rdma_destroy_event_channel(c); }
};
using event_channel_ptr = std::unique_ptr<rdma_event_channel, event_channel_deleter>;

/*! The errno a failed completion stands for: RC retry exhaustion (the peer stopped
 * answering) ETIMEDOUT, a message above the receive's size EMSGSIZE, a broken peer
 * (remote access or RNR retries: its credits were wrong) EPROTO, else ECONNRESET. */
SPEAD_API int wc_errno(ibv_wc_status status);

/*! rdma_connect / rdma_accept's parameters: \p data as private data, RC retries. */
SPEAD_API rdma_conn_param conn_param(const void* data, std::size_t size);

/*! A non-blocking event channel. \throws std::system_error */
SPEAD_API event_channel_ptr create_event_channel();

/*!
 * The device limit that matters here: the max message size of the verbs device that
 * owns \p address (its port), or of the first verbs device when \p address is
 * unspecified. \throws std::invalid_argument naming \p parameter when no verbs device
 * owns it (a non-verbs interface) or there is none
 */
SPEAD_API std::uint32_t device_max_message(const boost::asio::ip::address_v4& address,
                                           const std::string& parameter,
                                           const std::string& shown);
/*! Refuses \p max_packet_size above \p device_max, naming both and the fix. */
SPEAD_API void check_max_packet_size(std::size_t max_packet_size,
                                     std::uint32_t device_max);

/*!
 * One connection's verbs objects: its own event channel (CM events: DISCONNECTED),
 * the cm id, one CQ for both directions with its completion channel, a PD, the RC QP
 * and an epoll fd that is readable when either channel (or the keepalive timer) is.
 * Members are declared in creation order, destroyed in reverse.
 */
class SPEAD_API queue
{
public:
    /*! Takes \p id (already migrated to \p channel) and makes the rest.
     * \throws std::system_error */
    queue(event_channel_ptr channel,
          ibv::cm_id_ptr id,
          std::uint32_t send_wr,
          std::uint32_t recv_wr,
          std::uint32_t inline_bytes);
    ~queue();

    int fd() const { return d_epoll.get(); }
    /*! The CM event channel's fd alone (readable when a CM event came). */
    int event_fd() const { return d_channel->fd; }
    ibv_qp* qp() const { return d_id->qp; }
    ibv_pd* pd() const { return d_pd.get(); }
    rdma_cm_id* id() const { return d_id.get(); }
    std::uint32_t granted_inline() const { return d_inline; }

    /*! Polls up to \p n completions after re-arming the channel. \return count, or
     * -errno when polling fails */
    int poll(ibv_wc* wc, int n);
    /*! The CM events that arrived: true once DISCONNECTED (or another end) came. */
    bool peer_gone();
    /*! peer_gone(), waiting up to \p timeout for the CM's event (a flushed QP may
     * show before its DISCONNECTED). */
    bool wait_peer_gone(std::chrono::milliseconds timeout);
    /*! The keepalive timer fired (and is re-armed for \p period). */
    bool timer_fired();
    void start_timer(std::chrono::milliseconds period);

private:
    /*! The id's QP, destroyed before the PD and CQ it uses, also when the
     * constructor fails after making it. */
    struct qp_holder {
        rdma_cm_id* id = nullptr;
        qp_holder() = default;
        qp_holder(const qp_holder&) = delete;
        qp_holder& operator=(const qp_holder&) = delete;
        ~qp_holder()
        {
            if (id)
                rdma_destroy_qp(id);
        }
    };

    event_channel_ptr d_channel;
    ibv::cm_id_ptr d_id;
    ibv::comp_channel_ptr d_comp;
    ibv::cq_ptr d_cq;
    ibv::pd_ptr d_pd;
    qp_holder d_qp;
    std::uint32_t d_inline = 0;
    file_descriptor d_timer;
    file_descriptor d_epoll;
    bool d_gone = false;
};

/*! Wire format of rdma_connect's private data (sender → receiver), little-endian. */
struct connect_data {
    std::uint32_t magic;
    std::uint32_t max_packet_size;
    std::uint64_t credit_address; //!< where the receiver writes `released`
    std::uint32_t credit_rkey;
    std::uint32_t reserved;
};
/*! Wire format of rdma_accept's private data (receiver → sender): the grant. */
struct accept_data {
    std::uint32_t magic;
    std::uint32_t recv_slots;
    std::uint32_t slot_size;
    std::uint32_t ring_rkey;
    std::uint64_t ring_address;
    std::uint32_t ring_size;
    std::uint32_t rdma_depth;
};
constexpr std::uint32_t wire_magic = 0x52445053; // "SPDR", version 1

/*! What a listener gives each connection. */
struct listen_settings {
    std::size_t max_packet_size = 0;
    std::size_t recv_depth = 0;
    std::size_t rdma_connections = 0;
    std::size_t rdma_depth = 0;
    /*! For messages: the parameter that gave the address, and as it was written. */
    std::string address_parameter = "endpoint";
    std::string address_shown;
};

/*! An accepted connection: posted receives, maybe a ring, and credits back. */
class SPEAD_API incoming : public link::incoming
{
public:
    incoming(std::unique_ptr<queue> q,
             const listen_settings& s,
             bool use_ring,
             std::shared_ptr<std::size_t> ring_users);
    ~incoming() override;
    /*! The grant for rdma_accept. */
    const accept_data& grant() const { return d_grant; }
    /*! After rdma_accept: the peer's credit block. */
    void set_peer(const connect_data& peer);

    int fd() const override { return d_queue->fd(); }
    std::ptrdiff_t receive(recv::packet_view* packets, std::size_t n) override;
    void release() override;
    /*! A failure, or the peer's goodbye, found after the messages given. */
    bool ready() const override { return d_error != 0 || d_peer_gone; }
    /*! In rdma's words: messages, the ring, the protocol. */
    std::string describe_ending(std::ptrdiff_t result) const override;

private:
    void post_receives(const std::uint32_t* slots, std::size_t n);
    void send_credits();
    /*! The connection failed with \p err: returned now, or after the \p got messages
     * before it (then at the next receive()). */
    std::ptrdiff_t fail(std::size_t got, int err);

    std::unique_ptr<queue> d_queue;
    std::size_t d_slot_size;
    ibv::mapping_ptr d_slots;
    ibv::mr_ptr d_slots_mr;
    ibv::mapping_ptr d_ring;
    ibv::mr_ptr d_ring_mr;
    ring_tracker d_tracker;
    accept_data d_grant{};
    connect_data d_peer{};
    std::shared_ptr<std::size_t> d_ring_users; //!< null when this one has no ring
    /*! Receive slots to post again: the last receive()'s, and those released since
     * the last credit write (posted with the next one, see release()). */
    std::vector<std::uint32_t> d_to_repost;
    std::size_t d_ring_to_release = 0;
    released d_released;
    released d_advertised;
    std::size_t d_writes_outstanding = 0; //!< credit writes not known complete
    std::size_t d_writes_unsignalled = 0; //!< posted since the last signalled one
    bool d_peer_gone = false;
    bool d_established = false;
    int d_error = 0; //!< -errno that ends the connection at the next receive()
    std::chrono::steady_clock::time_point d_last_write;
};

/*! A connection to a receiver: copies each message into a registered send slot and
 * sends it on the path the credits allow. */
class SPEAD_API outgoing : public link::outgoing
{
public:
    outgoing(std::unique_ptr<queue> q, std::size_t max_packet_size, std::size_t depth);
    ~outgoing() override;
    /*! The credit block to advertise in rdma_connect. */
    connect_data advertise() const;
    /*! From rdma_accept's private data. \throws std::system_error (EPROTO, EMSGSIZE) */
    void set_grant(const accept_data& g, const std::string& describe);

    int fd() const override { return d_queue->fd(); }
    /*! Posts a message per packet while credits and send slots last. */
    std::ptrdiff_t send(const send::packet* packets, std::size_t n) override;
    /*! Credits come back as RDMA writes into the credit block, which raise no event:
     * completions wake a wait (POLLIN), and a short timeout catches the credits. */
    short room_events() const override { return POLLIN; }
    int room_wait_ms() const override { return 1; }
    /*! A thread of its own waits for the CM's DISCONNECTED (the receiver died, or
     * ended the connection) and calls \p gone(ECONNRESET): seen while idle. */
    void watch(std::function<void(int)> gone) override;
    /*! Bytes of messages posted whose completion has not come (an RC completion says
     * the receiver's NIC took the message): a heap counts as sent once all its
     * messages completed, as a tcp heap once acknowledged. Takes the completions
     * there are; after a failed one, what had completed before it. */
    std::ptrdiff_t unacknowledged() const override;
    /*! Posts a zero-length RDMA write (no memory named, IBA C9-88) unless one is still
     * in flight: on a dead path it fails with RC retry exhaustion, which the next call
     * (or send) reports. 0, or the errno that failed the connection. */
    int keep_alive() override;

private:
    /*! Posts one packet as one message: 1, -EAGAIN without credit or a free slot,
     * -errno on failure. */
    std::ptrdiff_t send_one(const send::packet& p);
    /*! Takes send completions (the keepalive's apart); -errno once one failed (and
     * from then on). */
    int reap() const;
    /*! The CM said the peer is gone (the watcher's, else polled here). */
    bool peer_gone();

    std::unique_ptr<queue> d_queue;
    std::size_t d_max_packet_size;
    std::size_t d_depth;
    ibv::mapping_ptr d_slots;
    ibv::mr_ptr d_slots_mr;
    ibv::mapping_ptr d_credit_block; //!< `released`, written by the receiver
    ibv::mr_ptr d_credit_mr;
    send_credits d_credits{ grant{} };
    std::uint64_t d_posted = 0;
    std::uint64_t d_posted_bytes = 0;
    std::vector<std::uint32_t>
        d_sizes; //!< each message in flight's, by d_posted % d_depth
    // What reap() learnt (it runs from the const unacknowledged() too).
    mutable std::uint64_t d_completed = 0;
    mutable std::uint64_t d_completed_bytes = 0;
    mutable int d_failed = 0;       //!< -errno of the first failed completion
    mutable bool d_probing = false; //!< a keepalive write is in flight
    // The watcher: the only reader of the CM events once started.
    std::thread d_watcher;
    file_descriptor d_stop_watching; //!< eventfd: the watcher ends
    std::atomic<bool> d_gone{ false };
};

/*! Listens with rdma_cm and accepts connections (link::listener). */
class SPEAD_API listener : public link::listener
{
public:
    /*! \throws std::invalid_argument for a non-verbs interface or a max_packet_size
     * above the device's; std::system_error when binding or listening fails */
    listener(const boost::asio::ip::address_v4& address,
             std::uint16_t port,
             const listen_settings& settings);
    int fd() const override { return d_channel->fd; }
    /*! Admission on the connect request: a peer refused is rejected before anything
     * is made for it. \throws link::accept_failure when its queue pair, memory or
     * registrations cannot be made (it is rejected) */
    std::unique_ptr<link::incoming> accept(const link::admit_function& admit) override;
    std::string describe() const override;

private:
    /*! The connection of the admitted request \p id (taken from it once its queue
     * holds it), accepted; nullptr when the peer went away. \throws std::system_error,
     * std::bad_alloc */
    std::unique_ptr<incoming> make_incoming(ibv::cm_id_ptr& id,
                                            const boost::asio::ip::address_v4& peer,
                                            const connect_data& wanted);

    event_channel_ptr d_channel;
    ibv::cm_id_ptr d_id;
    listen_settings d_settings;
    boost::asio::ip::address_v4 d_address;
    std::uint16_t d_port;
    std::shared_ptr<std::size_t> d_ring_users = std::make_shared<std::size_t>(0);
};

/*! Connects with rdma_cm (link::dialer). */
class SPEAD_API dialer : public link::dialer
{
public:
    /*! \throws std::invalid_argument for a non-verbs interface or a max_packet_size
     * above the device's */
    dialer(const boost::asio::ip::address_v4& address,
           std::uint16_t port,
           const boost::asio::ip::address_v4& local,
           std::size_t max_packet_size,
           std::size_t send_depth,
           std::size_t inline_bytes);
    std::unique_ptr<link::outgoing> connect(std::chrono::milliseconds timeout,
                                            int abort_fd) override;
    std::string describe() const override;

private:
    boost::asio::ip::address_v4 d_address;
    std::uint16_t d_port;
    boost::asio::ip::address_v4 d_local;
    std::size_t d_max_packet_size;
    std::size_t d_send_depth;
    std::size_t d_inline_bytes;
};

} // namespace rdma
} // namespace spead
} // namespace gr

#endif
