/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_INPROC_H
#define INCLUDED_SPEAD_RECV_INPROC_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/inproc_queue.h>
#include <gnuradio/spead/recv_stream.h>
#include <memory>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Reads the packets a send::inproc_stream (or inproc_queue::add_copy()) put
 * in an inproc_queue, as spead2's inproc_reader: a stream in the same process.
 *
 * Lossless, as a capture replay: packets wait in the queue while the stream's
 * queue is full, so a slow consumer slows the reader down instead of losing heaps.
 * The reader ends (end of input) once the queue is stopped and empty.
 */
class SPEAD_API inproc_reader : public transport_reader
{
public:
    /*! \throws std::invalid_argument when \p queue is null */
    inproc_reader(stream& owner, std::shared_ptr<inproc_queue> queue);

    const std::shared_ptr<inproc_queue>& get_queue() const;

private:
    struct impl; //!< the reading loop (inproc_reader.cc)
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_INPROC_H */
