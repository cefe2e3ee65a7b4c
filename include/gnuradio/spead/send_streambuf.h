/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_STREAMBUF_H
#define INCLUDED_SPEAD_SEND_STREAMBUF_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_stream.h>
#include <boost/asio/io_context.hpp>
#include <streambuf>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Writes the packets of its heaps back to back to a std::streambuf (spead2's
 * streambuf_stream; Python's BytesStream over a string buffer): what a
 * recv::buffer_reader reads. One substream. A short write fails the heap with
 * boost::asio::error::eof.
 *
 * \p streambuf must outlive the stream; read it once the heaps are sent (flush()),
 * since the writer thread writes to it meanwhile.
 */
class SPEAD_API streambuf_stream : public stream
{
public:
    streambuf_stream(boost::asio::io_context& io,
                     std::streambuf& streambuf,
                     const stream_config& config = stream_config());

private:
    struct impl; //!< the writer, owned by the stream
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_STREAMBUF_H */
