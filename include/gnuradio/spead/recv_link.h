/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_LINK_H
#define INCLUDED_SPEAD_RECV_LINK_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_reader.h>
#include <cstddef>
#include <memory>

namespace gr {
namespace spead {

namespace link {
class listener;
struct reader_limits;
} // namespace link

namespace recv {

/*!
 * \brief What the readers of connected links (tcp_reader, rdma_reader) share: one
 * loop over a listener and its connections (the library's link::connected_reader),
 * each connection a source of its own (its own heap cnts and max_heaps window), its
 * counters in transport_stats(). A derived reader only makes its listener.
 */
class SPEAD_API link_reader : public transport_reader
{
public:
    /*! Connections open now. */
    std::size_t get_num_connections() const;

protected:
    explicit link_reader(stream& owner) : transport_reader(owner) {}
    /*! Serves \p l within \p limits: the derived constructor's last step. */
    void listen(std::unique_ptr<link::listener> l, const link::reader_limits& limits);

private:
    struct impl; //!< the connected_reader and its packet_sink (link_reader.cc)
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_LINK_H */
