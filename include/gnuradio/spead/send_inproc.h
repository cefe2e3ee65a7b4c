/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_INPROC_H
#define INCLUDED_SPEAD_SEND_INPROC_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/inproc_queue.h>
#include <gnuradio/spead/send_stream.h>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <vector>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Sends heaps into inproc_queues of this process (spead2's inproc_stream):
 * substream i is queue i, read by a recv::inproc_reader. Each packet is copied into
 * its queue, which never refuses one until it is stopped; a heap sent to a stopped
 * queue fails with boost::asio::error::operation_aborted.
 */
class SPEAD_API inproc_stream : public stream
{
public:
    /*!
     * \param io runs the completion handlers
     * \param config packet size, rate, queue
     * \param queues one substream each
     * \throws std::invalid_argument when \p queues is empty or holds a null
     */
    inproc_stream(boost::asio::io_context& io,
                  const stream_config& config,
                  const std::vector<std::shared_ptr<inproc_queue>>& queues);

    const std::vector<std::shared_ptr<inproc_queue>>& get_queues() const;

private:
    struct impl; //!< the writer, owned by the stream
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_INPROC_H */
