/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_PCAP_H
#define INCLUDED_SPEAD_RECV_PCAP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_stream.h>
#include <cstdint>
#include <memory>
#include <string>

namespace gr {
namespace spead {
namespace recv {

/*!
 * \brief Replays the UDP payloads of a capture file (pcap or pcapng; Ethernet or
 * Linux cooked) into a stream, as fast as the stream takes them.
 *
 * Frames that are not unfragmented IPv4 UDP are counted (frames_not_ipv4_udp,
 * frames_vlan, frames_ip_options, frames_fragmented, frames_truncated), as are
 * datagrams to other ports (frames_filtered). At the end of the file the reader
 * reports it has finished, so the stream ends (flushing live heaps) once every reader
 * has. A read error (a truncated or corrupt file) is a reader failure: counted in
 * reader_errors, logged with the file and libpcap's message, and it ends the stream
 * (stream::has_failed()) after the heaps completed before it.
 *
 * Replay does not wait for the consumer: like a live source, a full heap queue drops
 * heaps (heaps_dropped_queue_full). Give the stream enough queue_heaps for bursts.
 */
class SPEAD_API pcap_reader : public transport_reader
{
public:
    /*!
     * Opens the capture (the replay begins once the stream has taken the reader).
     * \param owner the stream fed
     * \param path capture file
     * \param dst_port replay only datagrams to this UDP port; 0 (default) replays all
     * \throws std::runtime_error naming the file when it cannot be read or its link
     *         type is not supported
     */
    pcap_reader(stream& owner, const std::string& path, std::uint16_t dst_port = 0);

    /*! Datagrams handed to the stream so far. */
    std::uint64_t get_datagrams_replayed() const;

private:
    struct impl; //!< the capture and the replay loop (pcap_reader.cc)
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_PCAP_H */
