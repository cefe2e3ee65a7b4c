/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The receive queue that udp_ibv_reader drives: where the NIC writes the frames that
// the flows steer to the queue's QP, and how they come back. Two peers implement it:
// slot_receive_queue (a ring of max_size + 42-byte slots, one receive WR each) and
// striding_receive_queue (an mlx5 multi-packet receive queue). The reader calls it
// once per poll batch, never per frame: poll() fills an array of work completions,
// the reader hands the payloads to the stream, then repost() gives the memory back.
// Both queues say where a frame is the same way, in the completion itself (wr_id), so
// the reader reads the slots' completions as ibv_poll_cq wrote them.
// make_receive_queue() picks the kind the device offers.

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_RECEIVE_QUEUE_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_RECEIVE_QUEUE_H

#include "device_binding.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gr {
namespace spead {
namespace ibv {

/*! Most completions one poll() takes: one batch for the stream, one repost. */
constexpr int max_poll_batch = 64;

class SPEAD_API receive_queue
{
public:
    virtual ~receive_queue() = default;

    /*! The QP that flows steer to. */
    virtual ibv_qp* qp() const = 0;
    /*! The CQ, for ibv_req_notify_cq and ibv_ack_cq_events. */
    virtual ibv_cq* cq() const = 0;
    /*! Bytes of registered receive memory. */
    virtual std::size_t buffer_size() const = 0;
    /*! True for a multi-packet receive queue (strides), false for fixed slots. */
    virtual bool multi_packet() const = 0;
    /*! Its kind and size, for the log ("4 WQEs x 16384 strides of 64 bytes ..."). */
    virtual std::string describe() const = 0;
    /*! What the log calls it when it fails ("receive queue pair", ...). */
    virtual const char* name() const = 0;

    /*! Posts all its memory and makes the queue ready to receive (after the flows). */
    virtual void start() = 0;
    /*! After an error completion the queue is in ERR: back to ready, everything
     * posted again. \throws std::system_error */
    virtual void reset() = 0;

    /*! Takes up to \p max (at most max_poll_batch) completions. Those with a frame
     * (or an error) go to \p out[0 .. frames): `wr_id` is the address of the frame in
     * the queue's memory (valid until repost()), `byte_len` its length, `status` and
     * `vendor_err` what the NIC said. Completions without a frame (the filler at the
     * end of a striding WQE) are taken but not written.
     * \return the completions taken; 0 when the CQ is empty
     * \throws std::runtime_error or std::system_error when polling fails */
    virtual int poll(ibv_wc* out, int max, int& frames) = 0;
    /*! Gives the memory of the frames the last poll() returned back to the NIC (after
     * their payloads have been copied). \throws std::system_error */
    virtual void repost() = 0;
};

/*! What make_receive_queue() builds a queue from. */
struct receive_queue_params {
    ibv_pd* pd = nullptr;
    ibv_comp_channel* channel = nullptr; //!< nullptr when busy polling
    int comp_vector = 0;         //!< as used (after the modulo); ignored w/o channel
    std::size_t buffer_size = 0; //!< bytes requested
    std::size_t max_frame = 0;   //!< max_size + 42: the largest frame accepted
};

/*! The multi-packet receive queue where the device offers one (and
 * GR_SPEAD_IBV_MPRQ is not 0), else the slot ring. Device limits that shrink the
 * buffer are logged by \p logger. \p why_slots says why slots were chosen (empty for a
 * multi-packet queue). \throws std::system_error when neither can be set up */
SPEAD_API std::unique_ptr<receive_queue>
make_receive_queue(const device_binding& device,
                   const receive_queue_params& params,
                   gr::logger& logger,
                   std::string& why_slots);

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
