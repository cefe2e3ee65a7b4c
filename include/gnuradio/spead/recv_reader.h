/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_READER_H
#define INCLUDED_SPEAD_RECV_READER_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/stats.h>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

namespace gr {
namespace spead {
namespace recv {

/*! A UDP payload handed from a transport to the stream. */
struct packet_view {
    const std::uint8_t* data;
    std::size_t size;
};

class stream;

/*!
 * \brief A source of packets for a stream (kernel UDP sockets, ibverbs, a capture).
 *
 * Constructed with the stream it feeds (stream::emplace_reader), which then runs the
 * reader's loop, run(), on a thread the reader owns, and joins that thread before it
 * destroys the reader: a reader class writes its loop and nothing about threads.
 *
 * run() returns at the end of its input (a capture file: the stream ends once every
 * reader has), or once stopping() is set or add_packets() returns false. It throws
 * when the transport fails for good; the exception's message names the cause and the
 * fix. The failure is counted (reader_errors), logged once, and ends the stream, so
 * its consumer sees `stopped` instead of waiting for packets that will never come.
 * docs/dev-recv-locking.md says which locks add_packets() takes.
 */
class SPEAD_API reader
{
public:
    explicit reader(stream& owner) : d_stream(owner) {}
    virtual ~reader();
    reader(const reader&) = delete;
    reader& operator=(const reader&) = delete;

    /*! Transport-level counters (frames rejected, kernel drops, ...). */
    virtual recv_stats transport_stats() const { return recv_stats(); }

protected:
    /*! The transport's receive loop (on the reader's thread). */
    virtual void run() = 0;
    /*! Called once stopping() is set, to end a wait in run() at once (e.g. write to an
     * eventfd it polls). Every wait in run() has a timeout anyway. */
    virtual void wake() {}
    /*! The stream is stopping: run() should return. */
    bool stopping() const { return d_stopping.load(std::memory_order_relaxed); }

    /*! Hands a batch of UDP payloads to the stream's packet path. Returns false once
     * the stream has ended (run() should then return). */
    bool add_packets(const packet_view* packets, std::size_t n);
    /*!
     * For readers with several senders at once (a listener's connections): \p n
     * sources of their own, numbered from the one returned. Each source's heaps are
     * assembled apart from every other's (its own heap cnts, its own max_heaps), so
     * senders may use the same cnts. Call once, from the constructor.
     */
    std::size_t reserve_sources(std::size_t n);
    /*! add_packets() for a batch of \p source's (one of reserve_sources()'). A stop
     * heap from it ends that source only: false is returned though the stream goes on
     * (stopping() is not set), and the reader ends that sender. */
    bool add_packets(const packet_view* packets, std::size_t n, std::size_t source);
    /*! \p source's sender has gone: its partial heaps are flushed (counted as any
     * incomplete heap), and the next sender given that source starts afresh. */
    void end_source(std::size_t source);
    /*!
     * For readers that must not lose data to a slow consumer (capture replay): waits up
     * to \p timeout until the heap queue has room and returns the free queue slots (0 on
     * timeout or once the stream has ended). A packet completes at most one heap and
     * evicts at most one, so a batch of at most max(1, free / 2) packets cannot overflow
     * the queue. Network readers never call this: the NIC must not wait.
     */
    std::size_t wait_for_queue_space(std::chrono::microseconds timeout);
    /*!
     * wait_for_queue_space() as a batch size, for lossless readers (capture replay,
     * inproc, a buffer): at most \p max packets that cannot overflow the queue
     * (max(1, free / 2)); 0 when the queue had no room within \p timeout or the
     * stream has ended.
     */
    std::size_t lossless_batch(std::size_t max, std::chrono::microseconds timeout);
    /*! The \p max lossless readers give lossless_batch(): packets handed to the stream
     * at once, as the socket reader does. */
    static constexpr std::size_t lossless_batch_packets = 64;
    /*! The stream this reader feeds. */
    stream& get_stream() { return d_stream; }

private:
    friend class stream;
    /*! Starts the thread that runs run() (the stream calls it once). */
    void start();
    /*! Sets stopping(), wakes run() and joins the thread (idempotent). */
    void join();

    stream& d_stream;
    std::atomic<bool> d_stopping{ false };
    std::thread d_thread;
};

/*!
 * \brief The shape of a transport's reader (udp, ibverbs, pcap, tcp, rdma): its
 * sockets, verbs objects or file and its loop live in the library, behind a pointer,
 * so that the public header names none of their types. run(), wake() and
 * transport_stats() go to that loop.
 */
class SPEAD_API transport_reader : public reader
{
public:
    ~transport_reader() override;

    recv_stats transport_stats() const override;

protected:
    /*! A transport's state and loop, defined in its .cc (the derived reader's `impl`).
     */
    class SPEAD_API loop
    {
    public:
        virtual ~loop();
        /*! reader::run(): the receive loop, on the reader's thread. */
        virtual void run() = 0;
        /*! reader::wake(): ends a wait in run() at once. */
        virtual void wake() {}
        /*! reader::transport_stats(). */
        virtual recv_stats stats() const { return recv_stats(); }
    };

    explicit transport_reader(stream& owner) : reader(owner) {}
    /*! The loop: set by the derived constructor, before the stream starts the thread.
     */
    void set_loop(std::unique_ptr<loop> l);
    /*! The loop, as the derived reader's own type. */
    template <typename Impl>
    Impl& loop_as() const
    {
        return static_cast<Impl&>(*d_loop);
    }

private:
    void run() final;
    void wake() final;

    std::unique_ptr<loop> d_loop;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_READER_H */
