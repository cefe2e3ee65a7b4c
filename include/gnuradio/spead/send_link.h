/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_LINK_H
#define INCLUDED_SPEAD_SEND_LINK_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_stream.h>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <memory>

namespace gr {
namespace spead {

namespace link {
class dialer;
class connected_writer;
struct writer_settings;
} // namespace link

namespace send {

/*!
 * \brief What the streams of connected links (tcp_stream, rdma_stream) share: a send
 * stream whose writer is the library's link::connected_writer over a dialer's
 * connections (back-pressure, acknowledgment, loss and reconnection as the dialer's
 * config says). A derived stream only makes its dialer.
 */
class SPEAD_API link_stream : public stream
{
public:
    /*! Ends a connection attempt, a back-off or a wait for room at once, so that the
     * queue's flush in ~stream does not wait on a dead link. */
    ~link_stream() override;

    /*! A connection is up now. */
    bool is_connected() const;

protected:
    /*! Connects through \p d: at once (\throws std::system_error when that fails),
     * or with reconnect in the background. */
    link_stream(boost::asio::io_context& io,
                const stream_config& config,
                std::unique_ptr<link::dialer> d,
                const link::writer_settings& settings);
    /*! Send buffer the current connection was granted, bytes (0 if none). */
    std::size_t granted_buffer() const;

private:
    const link::connected_writer& link_writer() const;
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_LINK_H */
