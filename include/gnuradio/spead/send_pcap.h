/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SEND_PCAP_H
#define INCLUDED_SPEAD_SEND_PCAP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/send_stream.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace send {

/*!
 * \brief Records heaps to a pcap file instead of sending them: each SPEAD packet
 * becomes one Ethernet/IPv4/UDP frame (EN10MB) stamped with the time it was written,
 * so rate limiting shows in the timestamps.
 *
 * Substream i goes to destination i. Frames come from 127.0.0.1 with the destination's
 * port as source port, from MAC 02:00:00:00:00:01 to the group's multicast MAC (or
 * 02:00:00:00:00:02 for unicast), TTL 1. The file is flushed after every batch, so
 * what send_heap() or flush() reported sent is on disk; it is closed with the stream.
 */
class SPEAD_API pcap_stream : public stream
{
public:
    /*!
     * \param io runs the completion handlers
     * \param config packet size, rate, queue
     * \param path file to create (replaced if it exists)
     * \param destinations one substream each
     * \throws std::invalid_argument for no or bad destinations
     * \throws std::runtime_error naming the file when it cannot be created
     */
    pcap_stream(boost::asio::io_context& io,
                const stream_config& config,
                const std::string& path,
                const std::vector<boost::asio::ip::udp::endpoint>& destinations);
    /*! \p destinations as text: `239.1.2.3:7148,239.1.2.4+3:7148` */
    pcap_stream(boost::asio::io_context& io,
                const stream_config& config,
                const std::string& path,
                const std::string& destinations);

private:
    struct impl; //!< the writer, owned by the stream
};

} // namespace send
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SEND_PCAP_H */
