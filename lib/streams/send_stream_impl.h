/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/*! \file send_stream_impl.h
 * send::stream's queue and writer state, shared by send_stream.cc (the producers' side)
 * and send_stream_writer.cc (the writer thread). Private to the library.
 */

#ifndef INCLUDED_SPEAD_STREAMS_SEND_STREAM_IMPL_H
#define INCLUDED_SPEAD_STREAMS_SEND_STREAM_IMPL_H

#include "packet_batch.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/send_stream.h>
#include <condition_variable>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gr {
namespace spead {
namespace send {

/*!
 * The heap queue: producers queue heaps under the mutex; the writer thread takes them
 * in order (started), cuts and writes them in batches (packet_batch) and completes
 * them once the transport is done with their memory.
 */
struct stream::impl {
    using entry = detail::queued_heap;

    impl(stream& owner, const stream_config& config)
        : owner(owner),
          config(config),
          logger("spead send_stream"),
          ring(config.get_max_heaps()),
          batch(config, [this] { return next_heap(); })
    {
        to_post.reserve(config.get_max_heaps());
    }

    entry& at(std::size_t offset) { return ring[(head + offset) % ring.size()]; }

    bool enqueue_locked(const heap& h,
                        completion_handler&& handler,
                        detail::heap_waiter* waiter,
                        std::int64_t cnt,
                        std::size_t substream_index);
    void check_substream(std::size_t substream_index) const;
    // writer thread
    void writer_loop();
    /*! The oldest heap the writer has not begun, now begun; null if none. */
    entry* next_heap();
    void complete_heaps(bool wait);

    stream& owner;
    const stream_config config;
    gr::logger logger;

    std::mutex mutex;
    std::condition_variable work_available; //!< writer waits: heap queued or stopping
    std::condition_variable heap_done;      //!< producers wait: room, completion, flush
    std::vector<entry> ring;
    std::size_t head = 0;    //!< oldest heap not completed
    std::size_t count = 0;   //!< heaps in the queue
    std::size_t started = 0; //!< of those, heaps the writer has begun
    std::uint64_t cnt_next = 1;
    std::uint64_t cnt_step = 1;
    bool stopping = false;
    send_stats stats;
    std::string failure; //!< the transport's, once it failed for good
    /*! failure is set: read without the mutex (the sink asks on every work()). */
    std::atomic<bool> failed{ false };
    std::thread writer;

    // ---- writer thread only ----
    detail::packet_batch batch;
    /*! Completed heaps' handlers, posted once the mutex is released: a producer woken
     * by the post must not find the mutex still held (it would block on it, and the
     * writer would have to wake it a second time). Capacity: the ring's size. */
    struct finished {
        completion_handler handler;
        boost::system::error_code ec;
        std::size_t bytes;
    };
    std::vector<finished> to_post;
    /*! Handlers taken off the queue but not yet posted; flush() waits for them too,
     * so that once it returns every completion handler is on the io_context. */
    std::atomic<std::size_t> posting{ 0 };
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STREAMS_SEND_STREAM_IMPL_H */
